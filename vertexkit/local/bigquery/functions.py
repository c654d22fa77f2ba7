"""The GoogleSQL functions a query may call on the local BigQuery, by family.

User SQL is checked against this list on its parsed tree (`sql.refuse_unknown_functions`), so
DuckDB's own functions and table functions (`read_blob`, `read_text`, `current_setting`,
`duckdb_settings`, `query`, ...) are refused with BigQuery's own answer for an unknown name,
"Function not found: NAME", even where DuckDB would run them. A GoogleSQL function in
NOT_SUPPORTED (one the local BigQuery cannot answer as BigQuery does) is refused with
"not supported by the local BigQuery: NAME"; the others are translated by googlesql.py and
checked by the conformance corpus (tests/googlesql_conformance). Names are upper case;
`SAFE.`-prefixed calls are checked by their base name.
"""

from __future__ import annotations

AGGREGATE = """
    ANY_VALUE ARRAY_AGG ARRAY_CONCAT_AGG AVG BIT_AND BIT_OR BIT_XOR COUNT COUNTIF GROUPING
    LOGICAL_AND LOGICAL_OR MAX MAX_BY MIN MIN_BY STRING_AGG SUM
"""
APPROXIMATE_AGGREGATE = """
    APPROX_COUNT_DISTINCT APPROX_QUANTILES APPROX_TOP_COUNT APPROX_TOP_SUM
"""
STATISTICAL_AGGREGATE = """
    CORR COVAR_POP COVAR_SAMP STDDEV STDDEV_POP STDDEV_SAMP VAR_POP VAR_SAMP VARIANCE
"""
NUMBERING_AND_NAVIGATION = """
    CUME_DIST DENSE_RANK NTILE PERCENT_RANK RANK ROW_NUMBER
    FIRST_VALUE LAG LAST_VALUE LEAD NTH_VALUE PERCENTILE_CONT PERCENTILE_DISC
"""
MATHEMATICAL = """
    ABS ACOS ACOSH ASIN ASINH ATAN ATAN2 ATANH CBRT CEIL CEILING COS COSH COSINE_DISTANCE COT
    COTH CSC CSCH DIV EUCLIDEAN_DISTANCE EXP FLOOR GREATEST IEEE_DIVIDE IS_INF IS_NAN LEAST LN
    LOG LOG10 MOD POW POWER RAND RANGE_BUCKET ROUND SAFE_ADD SAFE_DIVIDE SAFE_MULTIPLY
    SAFE_NEGATE SAFE_SUBTRACT SEC SECH SIGN SIN SINH SQRT TAN TANH TRUNC
"""
STRING = """
    ASCII BYTE_LENGTH CHAR_LENGTH CHARACTER_LENGTH CHR CODE_POINTS_TO_BYTES
    CODE_POINTS_TO_STRING COLLATE CONCAT CONTAINS_SUBSTR EDIT_DISTANCE ENDS_WITH FORMAT
    FROM_BASE32 FROM_BASE64 FROM_HEX INITCAP INSTR LEFT LENGTH LOWER LPAD LTRIM NORMALIZE
    NORMALIZE_AND_CASEFOLD OCTET_LENGTH REGEXP_CONTAINS REGEXP_EXTRACT REGEXP_EXTRACT_ALL
    REGEXP_INSTR REGEXP_REPLACE REGEXP_SUBSTR REPEAT REPLACE REVERSE RIGHT RPAD RTRIM
    SAFE_CONVERT_BYTES_TO_STRING SOUNDEX SPLIT STARTS_WITH STRPOS SUBSTR SUBSTRING
    TO_BASE32 TO_BASE64 TO_CODE_POINTS TO_HEX TRANSLATE TRIM UNICODE UPPER
"""
DATE_AND_TIME = """
    CURRENT_DATE CURRENT_DATETIME CURRENT_TIME CURRENT_TIMESTAMP
    DATE DATE_ADD DATE_BUCKET DATE_DIFF DATE_FROM_UNIX_DATE DATE_SUB DATE_TRUNC
    DATETIME DATETIME_ADD DATETIME_BUCKET DATETIME_DIFF DATETIME_SUB DATETIME_TRUNC
    EXTRACT FORMAT_DATE FORMAT_DATETIME FORMAT_TIME FORMAT_TIMESTAMP GENERATE_DATE_ARRAY
    GENERATE_TIMESTAMP_ARRAY LAST_DAY PARSE_DATE PARSE_DATETIME PARSE_TIME PARSE_TIMESTAMP
    TIME TIME_ADD TIME_DIFF TIME_SUB TIME_TRUNC TIMESTAMP TIMESTAMP_ADD TIMESTAMP_BUCKET
    TIMESTAMP_DIFF TIMESTAMP_MICROS TIMESTAMP_MILLIS TIMESTAMP_SECONDS TIMESTAMP_SUB
    TIMESTAMP_TRUNC UNIX_DATE UNIX_MICROS UNIX_MILLIS UNIX_SECONDS
"""
INTERVAL = """
    JUSTIFY_DAYS JUSTIFY_HOURS JUSTIFY_INTERVAL MAKE_INTERVAL
"""
ARRAY = """
    ARRAY ARRAY_CONCAT ARRAY_FIRST ARRAY_LAST ARRAY_LENGTH ARRAY_REVERSE ARRAY_SLICE
    ARRAY_TO_STRING GENERATE_ARRAY OFFSET ORDINAL SAFE_OFFSET SAFE_ORDINAL UNNEST
"""
STRUCT_AND_RANGE = """
    STRUCT RANGE RANGE_CONTAINS RANGE_END RANGE_INTERSECT RANGE_OVERLAPS RANGE_START
"""
JSON = """
    BOOL FLOAT64 INT64 JSON_ARRAY JSON_ARRAY_APPEND JSON_ARRAY_INSERT JSON_EXTRACT
    JSON_EXTRACT_ARRAY JSON_EXTRACT_SCALAR JSON_EXTRACT_STRING_ARRAY JSON_KEYS JSON_OBJECT
    JSON_QUERY JSON_QUERY_ARRAY JSON_REMOVE JSON_SET JSON_STRIP_NULLS JSON_TYPE JSON_VALUE
    JSON_VALUE_ARRAY LAX_BOOL LAX_FLOAT64 LAX_INT64 LAX_STRING PARSE_JSON STRING TO_JSON
    TO_JSON_STRING
"""
CONVERSION = """
    CAST PARSE_BIGNUMERIC PARSE_NUMERIC SAFE_CAST
"""
CONDITIONAL = """
    COALESCE IF IFNULL NULLIF NULLIFZERO ZEROIFNULL
"""
HASH_AND_ID = """
    FARM_FINGERPRINT GENERATE_UUID MD5 SHA1 SHA256 SHA512
"""
BIT = """
    BIT_COUNT
"""
UTILITY = """
    ERROR SESSION_USER
"""
# Called as `NET.NAME(...)`; sql.py names such a call "NET.NAME".
NET = """
    NET.HOST NET.IP_FROM_STRING NET.IP_NET_MASK NET.IP_TO_STRING NET.IP_TRUNC
    NET.IPV4_FROM_INT64 NET.IPV4_TO_INT64 NET.PUBLIC_SUFFIX NET.REG_DOMAIN
    NET.SAFE_IP_FROM_STRING
"""

# Called as `HLL_COUNT.NAME(...)` (sql.py names such a call "HLL_COUNT.NAME").
HLL_COUNT = """
    HLL_COUNT.EXTRACT HLL_COUNT.INIT HLL_COUNT.MERGE HLL_COUNT.MERGE_PARTIAL
"""

# Honoured by geography.py; every other ST_ function is refused by name (sql.py).
GEOGRAPHY = """
    ST_AREA ST_ASTEXT ST_CONTAINS ST_DISTANCE ST_DWITHIN ST_EQUALS ST_GEOGFROMGEOJSON
    ST_GEOGFROMTEXT ST_GEOGPOINT ST_INTERSECTS ST_LENGTH ST_X ST_Y
"""

FAMILIES: dict[str, str] = {
    "aggregate": AGGREGATE,
    "approximate aggregate": APPROXIMATE_AGGREGATE,
    "statistical aggregate": STATISTICAL_AGGREGATE,
    "numbering and navigation": NUMBERING_AND_NAVIGATION,
    "mathematical": MATHEMATICAL,
    "string": STRING,
    "date and time": DATE_AND_TIME,
    "interval": INTERVAL,
    "array": ARRAY,
    "struct and range": STRUCT_AND_RANGE,
    "JSON": JSON,
    "conversion": CONVERSION,
    "conditional": CONDITIONAL,
    "hash and id": HASH_AND_ID,
    "bit": BIT,
    "utility": UTILITY,
    "net": NET,
    "HyperLogLog++": HLL_COUNT,
    "geography": GEOGRAPHY,
}

GOOGLESQL_FUNCTIONS: frozenset[str] = frozenset(
    name for names in FAMILIES.values() for name in names.split()
)

# GoogleSQL functions the local BigQuery cannot answer as BigQuery does: refused by name with
# "not supported by the local BigQuery: NAME" (a 400), never answered differently. Each has a
# refusal case in the conformance corpus with BigQuery's answer written beside it.
NOT_SUPPORTED: frozenset[str] = frozenset(
    [
        "PARSE_NUMERIC",
        "PARSE_BIGNUMERIC",
        "SOUNDEX",
        "REGEXP_INSTR",
        "UNICODE",
        "SAFE_CONVERT_BYTES_TO_STRING",
        "CODE_POINTS_TO_BYTES",
        "TO_CODE_POINTS",
        "CODE_POINTS_TO_STRING",
        "COLLATE",
        "DATE_BUCKET",
        "DATETIME_BUCKET",
        "TIMESTAMP_BUCKET",
        "TIME_TRUNC",
        "ARRAY_FIRST",
        "ARRAY_LAST",
        "SHA512",
        "ZEROIFNULL",
        "NULLIFZERO",
        "RANGE",
        "RANGE_CONTAINS",
        "RANGE_END",
        "RANGE_INTERSECT",
        "RANGE_OVERLAPS",
        "RANGE_START",
        "JSON_ARRAY_APPEND",
        "JSON_ARRAY_INSERT",
        "CSC",
        "SEC",
        "COTH",
        "CSCH",
        "SECH",
        "SESSION_USER",  # the caller's email: the local cloud has no caller identity
    ]
)

# Arguments that BigQuery requires of a call and sqlglot's parser lets a call leave out (sqlglot
# 30.31 reads `REGEXP_REPLACE('a', 'b')` as valid and writes it for DuckDB with an empty
# replacement): the parsed call's argument slots that must be filled, and BigQuery's signature
# for the error. Signatures from BigQuery's function reference (string functions), where BigQuery
# answers "No matching signature for function NAME ...".
REQUIRED_ARGUMENTS: dict[str, tuple[tuple[str, ...], str]] = {
    "REGEXP_REPLACE": (
        ("this", "expression", "replacement"),
        "REGEXP_REPLACE(STRING, STRING, STRING)",
    ),
    "REPLACE": (("this", "expression", "replacement"), "REPLACE(STRING, STRING, STRING)"),
    "SUBSTR": (("this", "start"), "SUBSTR(STRING, INT64, [INT64])"),
}
