"""diskannpy's warm case (every node cached), a few search lists, 2 threads, 8 s each: the quick
peer point for scripts/bench/bench-peers.sh. Needs the index that ../shared/bench/bl_diskann.py built.
Usage: BENCHDATA=... python diskannpy-warm-quick.py DATASET [L ...]"""
import sys, time, numpy as np
import os
sys.path.insert(0, os.environ.get('PEER_BENCH', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'shared', 'bench')))
import benchlib as bl, bl_diskann as bd
import diskannpy as dap
ds=sys.argv[1]
base,q,gt,man=bl.load(ds); n,dim=base.shape; del base
idx=dap.StaticDiskIndex(index_directory=bd.idx_dir(ds), num_threads=2, num_nodes_to_cache=n, cache_mechanism=1, distance_metric="l2", vector_dtype=np.float32, dimensions=dim, index_prefix="ann")
q=np.ascontiguousarray(q,dtype=np.float32)
idx.batch_search(q,10,50,2,2)
for L in [int(x) for x in sys.argv[2:]] or (100, 120, 150):
    t0=time.time(); reps=0
    while time.time()-t0<8:
        r=idx.batch_search(q,10,L,2,2); reps+=1
    el=time.time()-t0
    print(f"diskannpy L={L} recall={bl.recall_at(r.identifiers,gt,10):.4f} qps2t={reps*len(q)/el:.0f}", flush=True)
