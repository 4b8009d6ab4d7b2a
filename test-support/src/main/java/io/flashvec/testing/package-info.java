/**
 * What the tests of every module share: the seeded randomness all of them draw from ({@link
 * io.flashvec.testing.TestSeeds}), waiting by polling instead of sleeping ({@link
 * io.flashvec.testing.Await}), and the check that a test class leaves no file open or mapped
 * ({@link io.flashvec.testing.LeakCheck}). The {@code FileIO} doubles that fail chosen calls or
 * simulate a power loss stay beside the seam they implement, in storage-nvme's test-jar.
 */
package io.flashvec.testing;
