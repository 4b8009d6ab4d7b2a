/** Implementation details of the cluster module; not API. */
package io.flashvec.cluster.internal;
