/** Collection endpoints: create, list, describe, exists, delete, flush, optimizations. */
package io.flashvec.api.collections;
