/**
 * The only package that touches jvector: building, writing, opening and searching DiskANN-style
 * segments. A jvector upgrade changes this package and nothing else.
 */
package io.flashvec.index.diskann;
