"""Microsoft DiskANN (PyPI diskannpy 0.7.0), its warm case, as the diskannpy peer of
scripts/bench/bench-peers.sh.

Builds a disk index of a load-gen dataset directory once (R=64, build L=100, PQ dim/8 bytes per
vector in RAM, full-precision vectors on disk, 2 threads, L2: the peers' disk indexes take no
cosine, and L2 ranks the unit vectors of a cosine dataset exactly as cosine does), then loads it
with every node cached and searches the dataset's queries with 2 threads and beam width 2, 8 s per
search list. Prints one line per list: `diskannpy L=<L> recall=<recall@10> qps2t=<QPS>`.

Usage: python diskannpy-warm-quick.py DATASET_DIR [L ...]      (default lists: 100 120 150)
       python diskannpy-warm-quick.py DATASET_DIR build        (only build the index if missing)
Env:   DISKANN_INDEX (index directory; default DATASET_DIR/diskannpy-index)
Needs: numpy and diskannpy==0.7.0"""
import json
import os
import sys
import time

import numpy as np

R, L_BUILD, THREADS, BEAM_WIDTH, SECONDS = 64, 100, 2, 2, 8


def read_vecs(path, dtype):
    raw = np.fromfile(path, dtype=np.int32)
    dim = int(raw[0])
    return raw.reshape(-1, dim + 1)[:, 1:].view(dtype)


def recall_at_10(found, truth):
    hits = sum(len(set(f[:10].tolist()) & set(t[:10].tolist())) for f, t in zip(found, truth))
    return hits / (len(truth) * 10)


def build(dap, base, index_dir):
    n, dim = base.shape
    pq_bytes = max(1, dim // 8)
    # DiskANN derives its PQ chunk count as floor(budget bytes / n) while the budget is below
    # 1.25 GB, so this budget gives pq_bytes chunks.
    budget_gb = (pq_bytes + 0.5) * n / 2**30
    os.makedirs(index_dir, exist_ok=True)
    t0 = time.time()
    dap.build_disk_index(data=np.ascontiguousarray(base, dtype=np.float32), distance_metric="l2",
                         index_directory=index_dir, complexity=L_BUILD, graph_degree=R,
                         search_memory_maximum=budget_gb, build_memory_maximum=8.0,
                         num_threads=THREADS, pq_disk_bytes=0, index_prefix="ann")
    info = dict(build_s=round(time.time() - t0, 1), pq_bytes=pq_bytes, R=R, L=L_BUILD, threads=THREADS)
    with open(os.path.join(index_dir, "build_info.json"), "w") as f:
        json.dump(info, f)
    print(f"diskannpy build {info}", flush=True)


def main():
    import diskannpy as dap

    dataset = sys.argv[1]
    build_only = sys.argv[2:] == ["build"]
    lists = [] if build_only else [int(x) for x in sys.argv[2:]] or [100, 120, 150]
    index_dir = os.environ.get("DISKANN_INDEX", os.path.join(dataset, "diskannpy-index"))
    base = read_vecs(os.path.join(dataset, "base.fvecs"), np.float32)
    n, dim = base.shape
    if not os.path.exists(os.path.join(index_dir, "build_info.json")):
        build(dap, base, index_dir)
    del base
    if build_only:
        return
    queries = np.ascontiguousarray(read_vecs(os.path.join(dataset, "query.fvecs"), np.float32))
    truth = read_vecs(os.path.join(dataset, "groundtruth.ivecs"), np.int32)
    index = dap.StaticDiskIndex(index_directory=index_dir, num_threads=THREADS, num_nodes_to_cache=n,
                                cache_mechanism=1, distance_metric="l2", vector_dtype=np.float32,
                                dimensions=dim, index_prefix="ann")
    index.batch_search(queries, 10, 50, THREADS, BEAM_WIDTH)  # warm-up, not measured
    for lst in lists:
        t0 = time.time()
        reps = 0
        while time.time() - t0 < SECONDS:
            result = index.batch_search(queries, 10, lst, THREADS, BEAM_WIDTH)
            reps += 1
        elapsed = time.time() - t0
        print(f"diskannpy L={lst} recall={recall_at_10(result.identifiers, truth):.4f} "
              f"qps2t={reps * len(queries) / elapsed:.0f}", flush=True)


if __name__ == "__main__":
    main()
