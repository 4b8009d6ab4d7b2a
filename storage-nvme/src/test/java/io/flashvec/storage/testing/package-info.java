/**
 * Test support shared through this module's test-jar: the seeded randomness every test draws from
 * ({@link io.flashvec.storage.testing.TestSeeds}), and {@link io.flashvec.storage.FileIO} doubles
 * that fail chosen calls ({@link io.flashvec.storage.testing.FaultyFileIO}) or simulate a power
 * loss ({@link io.flashvec.storage.testing.CrashSimulatingFileIO}). Both doubles track the channels
 * they open, so tests can assert that no file descriptor leaked.
 */
package io.flashvec.storage.testing;
