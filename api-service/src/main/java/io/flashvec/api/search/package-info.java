/** Search endpoints: search, search/batch, and the universal query (nearest-vector form). */
package io.flashvec.api.search;
