"""GEOGRAPHY on the local BigQuery: values, WKT as BigQuery writes it, and the ST_ functions.

A GEOGRAPHY is stored in DuckDB's own GEOMETRY type (WKB of longitude/latitude in degrees), so
the type survives every expression and every result schema reads it back as GEOGRAPHY
(`responses.duckdb_to_field`); a VARCHAR holding WKT would come back as STRING, and DuckDB's
`CREATE TYPE ... AS VARCHAR` aliases do not survive into result types (measured, DuckDB 2.0).
Every value leaves as WKT text (query results, tabledata.list, the Storage Read API's Arrow and
Avro, where Google's docs make GEOGRAPHY a WKT string): `as_text` below.

BigQuery's geographies live on a sphere with geodesic edges (S2). Measures here are on the
sphere of radius 6371008.8 m that BigQuery documents: great-circle arcs (atan2 of the cross
and dot products), spherical excess for areas (Van Oosterom and Strackee's triangle formula),
so they are exact up to floating-point rounding, not an approximation of the edges. The
predicates (ST_CONTAINS, ST_INTERSECTS) project both values with a gnomonic projection, which
maps every great circle onto a straight line, and ask shapely (GEOS) in that plane: exact for
geodesic edges; values that do not fit in one hemisphere around their centre are refused.

What is honoured: POINT, LINESTRING, POLYGON without holes, and the empty geography. Polygons
are normalized as BigQuery's ST_GEOGFROMTEXT documents (the smaller of the two regions, so the
ring is written counter-clockwise: a clockwise ring is written in reverse vertex order, as the
reference's ST_GEOGFROM example shows). MULTI* and GEOMETRYCOLLECTION values, holes, and the
`oriented`/`planar`/`make_valid` arguments are refused by name: BigQuery reorders the parts of
a collection (by S2 cell) in a way not reproduced here.

Reference: https://cloud.google.com/bigquery/docs/reference/standard-sql/geography_functions
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import duckdb
import pyarrow as pa
import shapely

from vertexkit.local.bigquery.query_error import not_supported

RADIUS_M = 6371010.0  # S2Earth's radius: what BigQuery's recorded answers measure with (see below)
EMPTY = "GEOMETRYCOLLECTION EMPTY"
WKB_EXTENSION = b"geoarrow.wkb"  # how DuckDB's Arrow export marks a GEOMETRY column
Vector = tuple[float, float, float]
Coordinates = Sequence[tuple[float, float]]


def _refused(what: str) -> ValueError:
    return ValueError(not_supported(what).message)


# -- values ------------------------------------------------------------------------------------
def _longitude(value: float) -> float:
    """Longitudes outside [-180, 180] are taken modulo 360, as ST_GEOGPOINT documents."""
    if -180.0 <= value <= 180.0:
        return value
    return (value + 180.0) % 360.0 - 180.0


def _checked(coordinates: Coordinates, function: str) -> list[tuple[float, float]]:
    points = []
    for x, y, *rest in coordinates:
        if rest:
            raise ValueError(f"{function}: three-dimensional coordinates are not supported")
        if not (math.isfinite(x) and math.isfinite(y)):
            raise ValueError(f"{function}: coordinates must be finite")
        if not -90.0 <= y <= 90.0:
            raise ValueError(f"{function}: latitude must be between -90 and 90 degrees, got {y}")
        points.append((_longitude(x), y))
    return points


def normalized(geometry: shapely.Geometry, function: str) -> shapely.Geometry:
    """A parsed value as BigQuery keeps it, or a ValueError naming what is wrong or refused."""
    if geometry.is_empty:
        return shapely.GeometryCollection()
    kind = geometry.geom_type
    if kind == "Point":
        return shapely.Point(_checked([(geometry.x, geometry.y)], function)[0])
    if kind == "LineString":
        points = _checked(geometry.coords, function)
        if len(set(points)) < 2:
            raise ValueError(f"{function}: a LINESTRING needs two distinct points")
        return shapely.LineString(points)
    if kind == "Polygon":
        if geometry.interiors:
            raise _refused("GEOGRAPHY polygons with holes")
        ring = _checked(geometry.exterior.coords, function)
        if len(set(ring)) < 3:
            raise ValueError(f"{function}: a POLYGON needs three distinct vertices")
        ring = _smaller_region(ring)
        _check_simple(ring, function)
        return shapely.Polygon(ring)
    raise _refused(f"{kind.upper()} geographies (only POINT, LINESTRING, POLYGON)")


def _smaller_region(ring: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The ring of the smaller region, interior on the left: reversed (S2's invert: the vertex
    order v[n-1] ... v[0], then v[n-1] again) when the ring as given encloses more than half
    the sphere on its left."""
    left = _signed_excess([_vector(x, y) for x, y in ring[:-1]])
    left_area = left if left >= 0 else 4 * math.pi + left
    if left_area <= 2 * math.pi:
        return ring
    vertices = ring[:-1][::-1]
    return [*vertices, vertices[0]]


def _check_simple(ring: list[tuple[float, float]], function: str) -> None:
    plane = _Gnomonic([_vector(x, y) for x, y in ring], function)
    projected = shapely.Polygon([plane.project(_vector(x, y)) for x, y in ring])
    if not projected.is_valid:
        reason = shapely.is_valid_reason(projected)
        raise ValueError(f"{function}: invalid polygon ({reason})")


def from_wkt(text: str) -> bytes:
    function = "ST_GEOGFROMTEXT"
    try:
        geometry = shapely.from_wkt(text)
    except shapely.errors.GEOSException as error:
        raise ValueError(f"{function}: invalid WKT {text!r}: {error}") from error
    return shapely.to_wkb(normalized(geometry, function))


def from_geojson(text: str) -> bytes:
    try:
        geometry = shapely.from_geojson(text)
    except shapely.errors.GEOSException as error:
        raise ValueError(f"ST_GEOGFROMGEOJSON: invalid GeoJSON {text!r}: {error}") from error
    return shapely.to_wkb(normalized(geometry, "ST_GEOGFROMGEOJSON"))


def from_loaded_text(text: str) -> bytes:
    """A GEOGRAPHY value as loads and tabledata.insertAll take it: GeoJSON or WKT text."""
    return from_geojson(text) if text.lstrip().startswith("{") else from_wkt(text)


def canonical_text(value: object) -> str:
    """A streamed value (tabledata.insertAll) checked and normalized, as full-precision WKT
    that DuckDB's GEOMETRY cast reads back to the same value."""
    if not isinstance(value, str):
        raise ValueError(value)
    return shapely.to_wkt(_read(from_loaded_text(value)), rounding_precision=-1, trim=True)


def point(longitude: float, latitude: float) -> bytes:
    return shapely.to_wkb(normalized(shapely.Point(longitude, latitude), "ST_GEOGPOINT"))


def _read(value: bytes) -> shapely.Geometry:
    return shapely.from_wkb(value)


# -- WKT as BigQuery writes it ----------------------------------------------------------------
def _number(value: float) -> str:
    # BigQuery writes 15 significant digits ("POINT(0.999999999999943 1)" in the reference).
    text = f"{value:.15g}"
    return "0" if text == "-0" else text


def _sequence(coordinates: Coordinates) -> str:
    return ", ".join(f"{_number(x)} {_number(y)}" for x, y in coordinates)


def wkt(geometry: shapely.Geometry) -> str:
    """`POINT(1 2)`, `LINESTRING(1 2, 3 4)`, `POLYGON((0 0, 1 0, 1 1, 0 0))`: no space before
    the parenthesis, as in the reference's examples."""
    if geometry.is_empty:
        return EMPTY
    kind = geometry.geom_type
    if kind == "Point":
        return f"POINT({_sequence(geometry.coords)})"
    if kind == "LineString":
        return f"LINESTRING({_sequence(geometry.coords)})"
    if kind == "Polygon":
        return f"POLYGON(({_sequence(geometry.exterior.coords)}))"
    raise _refused(f"{kind.upper()} geographies")


def as_text(value: bytes) -> str:
    return wkt(_read(value))


def text_columns(table: pa.Table) -> pa.Table:
    """Every GEOGRAPHY (GEOMETRY) column of DuckDB's Arrow export as BigQuery's WKT text."""
    for index, field in enumerate(table.schema):
        if (field.metadata or {}).get(b"ARROW:extension:name") != WKB_EXTENSION:
            continue
        values = [None if v is None else as_text(v) for v in table.column(index).to_pylist()]
        table = table.set_column(index, pa.field(field.name, pa.string()), pa.array(values))
    return table


# -- the sphere --------------------------------------------------------------------------------
def _vector(longitude: float, latitude: float) -> Vector:
    lon, lat = math.radians(longitude), math.radians(latitude)
    return (math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat))


def _dot(a: Vector, b: Vector) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cross(a: Vector, b: Vector) -> Vector:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _norm(a: Vector) -> float:
    return math.sqrt(_dot(a, a))


def _angle(a: Vector, b: Vector) -> float:
    """The angle between two unit vectors: atan2 keeps it accurate for tiny and near-antipodal
    pairs, where acos of the dot product loses digits."""
    return math.atan2(_norm(_cross(a, b)), _dot(a, b))


def _point_to_arc(p: Vector, a: Vector, b: Vector) -> float:
    """The angle from p to the shorter great-circle arc a-b."""
    normal = _cross(a, b)
    length = _norm(normal)
    if length < 1e-300:
        return _angle(p, a)
    n = (normal[0] / length, normal[1] / length, normal[2] / length)
    off = _dot(p, n)
    foot = (p[0] - off * n[0], p[1] - off * n[1], p[2] - off * n[2])
    if _dot(_cross(a, foot), n) >= 0 and _dot(_cross(foot, b), n) >= 0:
        return math.atan2(abs(off), _norm(foot))
    return min(_angle(p, a), _angle(p, b))


def _signed_excess(vertices: list[Vector]) -> float:
    """The spherical excess of a closed ring (its area on the unit sphere), positive when the
    vertices run counter-clockwise around the region on their left: a fan of triangles from
    the first vertex, each by Van Oosterom and Strackee's formula."""
    total, first = 0.0, vertices[0]
    for b, c in itertools.pairwise(vertices[1:]):
        numerator = _dot(first, _cross(b, c))
        denominator = 1 + _dot(first, b) + _dot(b, c) + _dot(c, first)
        total += 2 * math.atan2(numerator, denominator)
    return total


class _Gnomonic:
    """The gnomonic projection about the mean of some points: great circles become lines."""

    def __init__(self, vectors: list[Vector], function: str) -> None:
        total = [sum(v[i] for v in vectors) for i in range(3)]
        length = math.sqrt(sum(t * t for t in total))
        if length < 1e-9:
            raise _refused(f"{function} of geographies spread over more than a hemisphere")
        self.centre: Vector = (total[0] / length, total[1] / length, total[2] / length)
        helper = (0.0, 0.0, 1.0) if abs(self.centre[2]) < 0.9 else (1.0, 0.0, 0.0)
        east = _cross(helper, self.centre)
        east_length = _norm(east)
        self.east: Vector = (east[0] / east_length, east[1] / east_length, east[2] / east_length)
        self.north: Vector = _cross(self.centre, self.east)
        if any(_dot(v, self.centre) < 0.01 for v in vectors):  # > ~89 degrees from the centre
            raise _refused(f"{function} of geographies spread over more than a hemisphere")

    def project(self, v: Vector) -> tuple[float, float]:
        scale = _dot(v, self.centre)
        return (_dot(v, self.east) / scale, _dot(v, self.north) / scale)


def _vertices(geometry: shapely.Geometry) -> list[Vector]:
    if geometry.geom_type == "Polygon":
        return [_vector(x, y) for x, y in geometry.exterior.coords]
    return [_vector(x, y) for x, y in geometry.coords]


def _edges(geometry: shapely.Geometry) -> list[tuple[Vector, Vector]]:
    vertices = _vertices(geometry)
    return list(itertools.pairwise(vertices))


def _planar(a: shapely.Geometry, b: shapely.Geometry, function: str) -> tuple[Any, Any]:
    plane = _Gnomonic(_vertices(a) + _vertices(b), function)

    def mapped(geometry: shapely.Geometry) -> shapely.Geometry:
        return shapely.transform(geometry, lambda xy: [plane.project(_vector(x, y)) for x, y in xy])

    return mapped(a), mapped(b)


# -- the functions (NULL in, NULL out: udfs.install) -------------------------------------------
def st_x(value: bytes) -> float:
    geometry = _read(value)
    if geometry.geom_type != "Point" or geometry.is_empty:
        raise ValueError("ST_X: the argument must be a single point")
    return geometry.x


def st_y(value: bytes) -> float:
    geometry = _read(value)
    if geometry.geom_type != "Point" or geometry.is_empty:
        raise ValueError("ST_Y: the argument must be a single point")
    return geometry.y


def st_intersects(first: bytes, second: bytes) -> bool:
    a, b = _read(first), _read(second)
    if a.is_empty or b.is_empty:
        return False
    pa_, pb = _planar(a, b, "ST_INTERSECTS")
    return bool(pa_.intersects(pb))


def st_contains(first: bytes, second: bytes) -> bool:
    """No point of the second outside the first, and their interiors meet: a GEOGRAPHY does
    not contain its own boundary (reference)."""
    a, b = _read(first), _read(second)
    if a.is_empty or b.is_empty:
        return False
    pa_, pb = _planar(a, b, "ST_CONTAINS")
    return bool(pa_.contains(pb))


def st_equals(first: bytes, second: bytes) -> bool:
    """The same GEOGRAPHY value (reference): each covers the other, or both are empty; the
    order of the points or vertices does not matter."""
    a, b = _read(first), _read(second)
    if a.is_empty or b.is_empty:
        return a.is_empty and b.is_empty
    pa_, pb = _planar(a, b, "ST_EQUALS")
    return bool(pa_.covers(pb) and pb.covers(pa_))


def st_distance(first: bytes, second: bytes) -> float | None:
    a, b = _read(first), _read(second)
    if a.is_empty or b.is_empty:
        return None  # the reference: NULL when either is empty
    if a.geom_type == "Point" and b.geom_type == "Point":
        return _angle(_vector(a.x, a.y), _vector(b.x, b.y)) * RADIUS_M
    pa_, pb = _planar(a, b, "ST_DISTANCE")
    if pa_.intersects(pb):
        return 0.0
    return _shortest(a, b) * RADIUS_M


def _shortest(a: shapely.Geometry, b: shapely.Geometry) -> float:
    """Between disjoint values the shortest arc ends at a vertex of one of them."""
    best = math.inf
    for one, other in ((a, b), (b, a)):
        edges = _edges(other)
        for vertex in _vertices(one):
            if not edges:
                best = min(best, min(_angle(vertex, v) for v in _vertices(other)))
            else:
                best = min(best, min(_point_to_arc(vertex, s, e) for s, e in edges))
    return best


def st_dwithin(first: bytes, second: bytes, distance: float) -> bool:
    meters = st_distance(first, second)
    return meters is not None and meters <= distance


def st_length(value: bytes) -> float:
    geometry = _read(value)
    if geometry.geom_type != "LineString" or geometry.is_empty:
        return 0.0  # points and polygons have no length (reference)
    return sum(_angle(s, e) for s, e in _edges(geometry)) * RADIUS_M


def st_area(value: bytes) -> float:
    geometry = _read(value)
    if geometry.geom_type != "Polygon" or geometry.is_empty:
        return 0.0  # points and lines have no area (reference)
    excess = _signed_excess(_vertices(geometry)[:-1])
    return abs(excess) * RADIUS_M * RADIUS_M


UDF = tuple[str, Callable[..., Any], list[str], str]
UDFS: list[UDF] = [
    ("bq_st_geogpoint", point, ["DOUBLE", "DOUBLE"], "GEOMETRY"),
    ("bq_st_geogfromtext", from_wkt, ["VARCHAR"], "GEOMETRY"),
    ("bq_st_geogfromgeojson", from_geojson, ["VARCHAR"], "GEOMETRY"),
    ("bq_geography_from_load", from_loaded_text, ["VARCHAR"], "GEOMETRY"),
    ("bq_st_astext", as_text, ["GEOMETRY"], "VARCHAR"),
    ("bq_st_x", st_x, ["GEOMETRY"], "DOUBLE"),
    ("bq_st_y", st_y, ["GEOMETRY"], "DOUBLE"),
    ("bq_st_distance", st_distance, ["GEOMETRY", "GEOMETRY"], "DOUBLE"),
    ("bq_st_dwithin", st_dwithin, ["GEOMETRY", "GEOMETRY", "DOUBLE"], "BOOLEAN"),
    ("bq_st_contains", st_contains, ["GEOMETRY", "GEOMETRY"], "BOOLEAN"),
    ("bq_st_intersects", st_intersects, ["GEOMETRY", "GEOMETRY"], "BOOLEAN"),
    ("bq_st_equals", st_equals, ["GEOMETRY", "GEOMETRY"], "BOOLEAN"),
    ("bq_st_area", st_area, ["GEOMETRY"], "DOUBLE"),
    ("bq_st_length", st_length, ["GEOMETRY"], "DOUBLE"),
]


def is_geography(kind: duckdb.typing.DuckDBPyType) -> bool:
    return kind.id == "geometry"
