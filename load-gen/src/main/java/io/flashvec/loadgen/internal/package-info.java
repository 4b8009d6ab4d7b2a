/** Helpers of the load generator that are not API: thread pools, machine information, JSON. */
package io.flashvec.loadgen.internal;
