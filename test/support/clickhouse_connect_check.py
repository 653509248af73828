"""clickhouse-connect (the Python client of Superset and most notebooks) against the warehouse's ClickHouse
HTTP interface: run by test/warehouse-clients.test.ts with the virtualenv of infra/clickhouse-connect.

    python clickhouse_connect_check.py <url> <analyst-password>

Each check prints one JSON line {"check": name, "ok": true}; the first failure raises (non-zero exit, with
the traceback on stderr). Values are compared exactly: what was inserted must be read back equal.
"""

import datetime
import decimal
import json
import sys
import urllib.parse
import uuid

import clickhouse_connect
import lz4.block
import urllib3
from clickhouse_cityhash.cityhash import CityHash128
from clickhouse_connect.driver.exceptions import DatabaseError

URL, ANALYST_PASSWORD = sys.argv[1], sys.argv[2]
parsed = urllib.parse.urlparse(URL)
HOST, PORT = parsed.hostname, parsed.port
DATABASE = "cc_" + uuid.uuid4().hex[:12]


def check(name):
    def run(fn):
        fn()
        print(json.dumps({"check": name, "ok": True}), flush=True)
        return fn

    return run


def client(**kwargs):
    options = {"host": HOST, "port": PORT, "username": "default", "password": ""}
    options.update(kwargs)
    return clickhouse_connect.get_client(**options)


def code_of(error):
    return getattr(error, "code", None)


writer = client()
writer.command(f"CREATE DATABASE {DATABASE}")
writer = client(database=DATABASE)


@check("connects with default compression and reads the server's version and time zone")
def _():
    assert writer.compression.startswith("lz4"), writer.compression
    assert writer.write_compression == "lz4", writer.write_compression
    assert writer.server_version.startswith("2"), writer.server_version
    assert writer.query("SELECT currentDatabase() AS db").result_rows == [(DATABASE,)]
    assert client().query("SELECT currentDatabase()").result_rows == [("tally",)]


@check("query with server-side parameters")
def _():
    result = writer.query(
        "SELECT {s:String} AS s, {n:UInt64} AS n, {d:Decimal(38,6)} AS d, {a:Array(String)} AS a",
        parameters={"s": "it's\ta tab", "n": 18446744073709551615, "d": decimal.Decimal("1.5"), "a": ["x", "y'z"]},
    )
    assert result.result_rows == [("it's\ta tab", 18446744073709551615, decimal.Decimal("1.500000"), ["x", "y'z"])], result.result_rows


@check("parameters too long for the URL travel as multipart/form-data")
def _():
    long = "x'\t" * 2000
    assert writer.query("SELECT {s:String} = repeat('x''\t', 2000)", parameters={"s": long}).result_rows == [(True,)]


@check("settings per query last for that query only")
def _():
    assert writer.query("SELECT getSetting('max_threads')", settings={"max_threads": 1}).result_rows == [(1,)]
    assert writer.query("SELECT getSetting('max_threads') = 1").result_rows == [(False,)]


COLUMNS = [
    ("id", "UInt32"),
    ("amount", "Decimal(38,6)"),
    ("at", "DateTime64(3,'UTC')"),
    ("meta", "Map(String,String)"),
    ("currency", "LowCardinality(String)"),
    ("record_id", "UUID"),
    ("tags", "Array(String)"),
    ("mrr", "Nullable(Decimal(38,6))"),
    ("recurring", "Nullable(Bool)"),
    ("bot", "Bool"),
    ("day", "Date"),
    ("seen", "DateTime('UTC')"),
    ("ratio", "Float64"),
    ("big", "UInt64"),
    ("note", "String"),
]

ROWS = [
    (
        1,
        decimal.Decimal("1.5"),
        datetime.datetime(2026, 1, 5, 12, 0, 0, 123000, tzinfo=datetime.timezone.utc),
        {"plan": "pro", "interval": "monthly"},
        "USD",
        uuid.UUID("0b3f6a1e-1111-4222-8333-444455556666"),
        ["a", "b"],
        decimal.Decimal("-20.25"),
        True,
        False,
        datetime.date(2026, 1, 5),
        datetime.datetime(2026, 1, 5, 12, 0, 1, tzinfo=datetime.timezone.utc),
        0.1,
        18446744073709551615,
        "héllo\n\t\x00 wörld",
    ),
    (
        2,
        decimal.Decimal("-12345678901234.123456"),
        datetime.datetime(1999, 12, 31, 23, 59, 59, 999000, tzinfo=datetime.timezone.utc),
        {},
        "",
        uuid.UUID("00000000-0000-0000-0000-000000000000"),
        [],
        None,
        None,
        True,
        datetime.date(1970, 1, 1),
        datetime.datetime(2100, 1, 1, 0, 0, 0, tzinfo=datetime.timezone.utc),
        -1.5e300,
        0,
        "",
    ),
]


def create(name):
    cols = ", ".join(f"`{n}` {t}" for n, t in COLUMNS)
    writer.command(f"CREATE TABLE {name} ({cols}) ENGINE = MergeTree ORDER BY id")


def read_back(reader, name):
    rows = reader.query(f"SELECT * FROM {name} ORDER BY id", query_tz="UTC").result_rows
    return [tuple(row) for row in rows]


def expected():
    # DateTime64/DateTime come back as naive UTC datetimes (clickhouse-connect's default for UTC).
    out = []
    for row in ROWS:
        row = list(row)
        row[2] = row[2].replace(tzinfo=None)
        row[11] = row[11].replace(tzinfo=None)
        out.append(tuple(row))
    return out


for compression in ("lz4", "zstd", "gzip", None):

    @check(f"insert (Native, {compression or 'uncompressed'}) of every column type the warehouse uses, read back equal")
    def _(compression=compression):
        name = f"types_{compression or 'none'}"
        create(name)
        inserter = client(database=DATABASE, compress=compression or False)
        summary = inserter.insert(name, ROWS, column_names=[n for n, _ in COLUMNS])
        assert summary.written_rows == 2, summary.summary
        got = read_back(inserter, name)
        assert got == expected(), (got, expected())


@check("a SET in one session breaks only that session; another client is unaffected")
def _():
    one = client(database=DATABASE)
    two = client(database=DATABASE)
    one.command("SET max_result_rows = 1")
    try:
        one.query("SELECT number FROM numbers(5)")
        raise AssertionError("the session's SET did not apply")
    except DatabaseError as error:
        assert code_of(error) == 396, error  # TOO_MANY_ROWS_OR_BYTES
    assert len(two.query("SELECT number FROM numbers(5)").result_rows) == 5


@check("the analyst user reads but cannot INSERT, ALTER, DROP or CREATE")
def _():
    analyst = client(database=DATABASE, username="analyst", password=ANALYST_PASSWORD)
    assert read_back(analyst, "types_lz4") == expected()
    for statement in (
        "ALTER TABLE types_lz4 DELETE WHERE 1",
        "DROP TABLE types_lz4",
        "CREATE TABLE x (a UInt8) ENGINE = Memory",
        "TRUNCATE TABLE types_lz4",
        "SET max_result_rows = 1",
    ):
        try:
            analyst.command(statement)
            raise AssertionError(f"the analyst ran {statement}")
        except DatabaseError as error:
            assert code_of(error) == 164, (statement, error)  # READONLY
    try:
        analyst.insert("types_lz4", ROWS, column_names=[n for n, _ in COLUMNS])
        raise AssertionError("the analyst inserted")
    except DatabaseError as error:
        assert code_of(error) == 164, error
    assert len(read_back(writer, "types_lz4")) == 2


def native_blocks(data, method=0x82):
    payload = lz4.block.compress(data, store_size=False) if method == 0x82 else data
    header = bytes([method]) + (9 + len(payload)).to_bytes(4, "little") + len(data).to_bytes(4, "little")
    checksum = CityHash128(header + payload)
    # ClickHouse writes the checksum's first 64-bit half, then the second, each little-endian
    return ((checksum >> 64).to_bytes(8, "little") + (checksum & (2**64 - 1)).to_bytes(8, "little")) + header + payload


def read_native_blocks(data):
    out = b""
    while data:
        method, size, raw = data[16], int.from_bytes(data[17:21], "little"), int.from_bytes(data[21:25], "little")
        block = data[16 : 16 + size]
        checksum = CityHash128(block)
        assert data[:16] == (checksum >> 64).to_bytes(8, "little") + (checksum & (2**64 - 1)).to_bytes(8, "little")
        payload = block[9:]
        out += lz4.block.decompress(payload, uncompressed_size=raw) if method == 0x82 else payload
        data = data[16 + size :]
    return out


@check("ClickHouse's compressed blocks: decompress=1 body and compress=1 result, CityHash128 checksums")
def _():
    http = urllib3.PoolManager()
    writer.command("CREATE TABLE blocks (a UInt32, s String) ENGINE = MergeTree ORDER BY a")
    body = native_blocks(b"1\tone\n2\ttwo\n") + native_blocks(b"3\tthree\n", method=0x02)
    query = urllib.parse.urlencode({"query": "INSERT INTO blocks FORMAT TSV", "decompress": "1", "database": DATABASE})
    response = http.request("POST", f"{URL}/?{query}", body=body)
    assert response.status == 200, response.data
    query = urllib.parse.urlencode({"compress": "1", "database": DATABASE})
    response = http.request("POST", f"{URL}/?{query}", body=b"SELECT * FROM blocks ORDER BY a")
    assert response.status == 200, response.data
    assert read_native_blocks(response.data) == b"1\tone\n2\ttwo\n3\tthree\n", response.data
    corrupt = bytearray(native_blocks(b"4\tfour\n"))
    corrupt[-1] ^= 0xFF
    query = urllib.parse.urlencode({"query": "INSERT INTO blocks FORMAT TSV", "decompress": "1", "database": DATABASE})
    response = http.request("POST", f"{URL}/?{query}", body=bytes(corrupt))
    assert response.status == 500 and response.headers["X-ClickHouse-Exception-Code"] == "40", response.data
    assert writer.query("SELECT count() FROM blocks").result_rows == [(3,)]


writer.command(f"DROP DATABASE {DATABASE}")
