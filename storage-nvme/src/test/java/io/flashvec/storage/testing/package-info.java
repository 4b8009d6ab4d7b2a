/**
 * Test doubles of the file-I/O seam, shared with the other modules through this module's test-jar:
 * {@link io.flashvec.storage.FileIO}s that fail chosen calls ({@link
 * io.flashvec.storage.testing.FaultyFileIO}) or simulate a power loss ({@link
 * io.flashvec.storage.testing.CrashSimulatingFileIO}). Both track the channels they open, so a test
 * can assert that no file descriptor leaked through them. They live beside the seam they implement
 * so that a change to {@code FileIO} and to its doubles is one change of one module.
 */
package io.flashvec.storage.testing;
