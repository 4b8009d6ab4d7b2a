/** Collection endpoints: create, list, describe, exists, delete, flush. */
package io.flashvec.api.collections;
