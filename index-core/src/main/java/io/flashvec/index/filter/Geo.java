package io.flashvec.index.filter;

import io.flashvec.index.filter.Condition.GeoBoundingBox;
import io.flashvec.index.filter.Condition.GeoPoint;
import io.flashvec.index.filter.Condition.GeoPolygon;
import io.flashvec.index.filter.Condition.GeoRadius;
import java.util.List;
import tools.jackson.databind.JsonNode;

/**
 * Geometry of the geo conditions, shared by the evaluator and the payload index so both decide
 * alike. Points are degrees of longitude ({@code x}) and latitude ({@code y}); distances are
 * haversine distances in meters on a sphere of the Earth's mean radius; polygons are planar in
 * longitude/latitude (an edge is a straight line on a plate carrée map, not a great circle).
 */
public final class Geo {

  /** The Earth's mean radius in meters (IUGG), the sphere of the haversine distance. */
  public static final double EARTH_RADIUS_METERS = 6_371_008.8;

  private Geo() {}

  /** Whether {@code lon} is in [-180, 180] and {@code lat} in [-90, 90]. */
  public static boolean valid(double lon, double lat) {
    return lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90;
  }

  /**
   * The geo point a payload value holds: an object with numeric {@code lon} and {@code lat} (other
   * keys are ignored) within the valid ranges; {@code null} for anything else. Out-of-range points
   * are not points (a geo payload index could not hold them either).
   */
  public static GeoPoint point(JsonNode v) {
    if (v == null || !v.isObject()) {
      return null;
    }
    JsonNode lon = v.get("lon");
    JsonNode lat = v.get("lat");
    if (lon == null || lat == null || !lon.isNumber() || !lat.isNumber()) {
      return null;
    }
    double x = lon.doubleValue();
    double y = lat.doubleValue();
    return valid(x, y) ? new GeoPoint(x, y) : null;
  }

  /** The haversine distance between two points, in meters. */
  public static double distanceMeters(GeoPoint a, GeoPoint b) {
    double lat1 = Math.toRadians(a.lat());
    double lat2 = Math.toRadians(b.lat());
    double sinLat = Math.sin((lat2 - lat1) / 2);
    double sinLon = Math.sin(Math.toRadians(b.lon() - a.lon()) / 2);
    double h = sinLat * sinLat + Math.cos(lat1) * Math.cos(lat2) * sinLon * sinLon;
    return 2 * EARTH_RADIUS_METERS * Math.asin(Math.sqrt(Math.min(1.0, h)));
  }

  /** Whether {@code p} lies strictly less than the radius from the center. */
  public static boolean inside(GeoRadius r, GeoPoint p) {
    return distanceMeters(r.center(), p) < r.radius();
  }

  /** Whether {@code p} lies strictly inside the box (which may cross the antimeridian). */
  public static boolean inside(GeoBoundingBox b, GeoPoint p) {
    double west = b.topLeft().lon();
    double east = b.bottomRight().lon();
    boolean lon = west > east ? p.lon() > west || p.lon() < east : west < p.lon() && p.lon() < east;
    return lon && b.bottomRight().lat() < p.lat() && p.lat() < b.topLeft().lat();
  }

  /**
   * Whether {@code p} lies in the polygon's interior: strictly inside the exterior ring, and
   * neither inside nor on the boundary of any hole.
   */
  public static boolean inside(GeoPolygon poly, GeoPoint p) {
    if (ring(poly.exterior(), p) != INSIDE) {
      return false;
    }
    for (List<GeoPoint> hole : poly.interiors()) {
      if (ring(hole, p) != OUTSIDE) {
        return false;
      }
    }
    return true;
  }

  private static final int OUTSIDE = 0;
  private static final int INSIDE = 1;
  private static final int ON_BOUNDARY = 2;

  /** Where {@code p} is relative to a closed ring: by crossing number, boundary tested exactly. */
  static int ring(List<GeoPoint> ring, GeoPoint p) {
    double x = p.lon();
    double y = p.lat();
    boolean in = false;
    for (int i = 0, n = ring.size(); i + 1 < n; i++) {
      GeoPoint a = ring.get(i);
      GeoPoint b = ring.get(i + 1);
      if (onSegment(a, b, x, y)) {
        return ON_BOUNDARY;
      }
      // the edge crosses the horizontal line through p, half-open so a vertex counts once
      if ((a.lat() > y) != (b.lat() > y)) {
        double cross = a.lon() + (y - a.lat()) * (b.lon() - a.lon()) / (b.lat() - a.lat());
        if (x < cross) {
          in = !in;
        }
      }
    }
    return in ? INSIDE : OUTSIDE;
  }

  private static boolean onSegment(GeoPoint a, GeoPoint b, double x, double y) {
    double cross = (b.lon() - a.lon()) * (y - a.lat()) - (b.lat() - a.lat()) * (x - a.lon());
    return cross == 0
        && x >= Math.min(a.lon(), b.lon())
        && x <= Math.max(a.lon(), b.lon())
        && y >= Math.min(a.lat(), b.lat())
        && y <= Math.max(a.lat(), b.lat());
  }
}
