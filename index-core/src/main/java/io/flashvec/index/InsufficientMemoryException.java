package io.flashvec.index;

/**
 * Maps to HTTP 507: a write would grow the resident index (PQ codes, ids, id maps of sealed
 * segments, which stay on the heap) past its slice of the server's memory budget. Nothing was
 * written; reads, searches and deletes keep working, and writes resume once the budget is raised or
 * deleted points are compacted away.
 */
public class InsufficientMemoryException extends FlashVecException {

  public InsufficientMemoryException(String message) {
    super(507, message, null);
  }
}
