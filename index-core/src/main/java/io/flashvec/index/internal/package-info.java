/** Implementation details of index-core; not API. */
package io.flashvec.index.internal;
