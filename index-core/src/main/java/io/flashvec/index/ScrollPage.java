package io.flashvec.index;

import java.util.List;

/** One page of a scroll: points in id order and the id to continue from ({@code null}: done). */
public record ScrollPage(List<Record> points, PointId nextOffset) {}
