/**
 * Datasets: fvecs/ivecs/bvecs, {@code .npy} and ann-benchmarks HDF5 readers, a deterministic
 * synthetic generator and exact (brute-force) ground truth.
 *
 * <p>A dataset on disk is a directory holding {@code base.fvecs}, {@code query.fvecs} and
 * optionally {@code groundtruth.ivecs} plus {@code manifest.json} (with its {@code metric}), or a
 * single {@code .hdf5}/{@code .npy} file. {@link io.flashvec.loadgen.dataset.DatasetLoader}
 * resolves all of them into a {@link io.flashvec.loadgen.dataset.Dataset}.
 */
package io.flashvec.loadgen.dataset;
