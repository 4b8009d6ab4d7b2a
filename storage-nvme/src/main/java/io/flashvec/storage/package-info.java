/**
 * Bytes on NVMe: the write-ahead log, atomically replaced files and the {@link
 * io.flashvec.storage.FileIO} seam through which every file operation goes. This module knows
 * nothing about vectors; callers hand it opaque byte records.
 */
package io.flashvec.storage;
