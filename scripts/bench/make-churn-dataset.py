"""Datasets for scripts/bench/bench-churn.sh from a load-gen dataset directory SRC (base.fvecs,
query.fvecs): NEW30K/base.fvecs = new vectors for the first 30% of the ids (another point of the
set plus N(0, 0.05) noise, renormalised; seed 7) and FINAL/{base,query}.fvecs = the data after the
churn. Ground truth of FINAL is computed by load-gen on first use.
Usage: python make-churn-dataset.py SRC NEW30K FINAL   (needs numpy)"""
import os, sys
import numpy as np


def read_fvecs(p):
    a = np.fromfile(p, dtype=np.int32)
    d = a[0]
    return a.reshape(-1, d + 1)[:, 1:].view(np.float32)


def write_fvecs(p, a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    out = np.empty((a.shape[0], a.shape[1] + 1), dtype=np.float32)
    out[:, 0] = np.frombuffer(np.int32(a.shape[1]).tobytes(), dtype=np.float32)[0]
    out[:, 1:] = a
    out.tofile(p)


src, new_dir, final_dir = sys.argv[1:4]
base = read_fvecs(os.path.join(src, "base.fvecs"))
q = read_fvecs(os.path.join(src, "query.fvecs"))
n = base.shape[0]
m = n * 3 // 10
rng = np.random.default_rng(7)
new = base[(np.arange(m) + n // 2) % n] + rng.normal(0, 0.05, (m, base.shape[1])).astype(np.float32)
new /= np.linalg.norm(new, axis=1, keepdims=True)
final = base.copy()
final[:m] = new
for d in (new_dir, final_dir):
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "manifest.json"), "w").write('{"metric": "cosine"}')
    write_fvecs(os.path.join(d, "query.fvecs"), q)
write_fvecs(os.path.join(new_dir, "base.fvecs"), new)
write_fvecs(os.path.join(final_dir, "base.fvecs"), final)
print("churn datasets written", new.shape, final.shape)
