# Schemathesis hooks for test/openapi-schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS).
# Tally's money rule cannot be stated in JSON Schema for a double: an amount must have at most 6 decimal
# places and 15 significant digits (so that it is stored exactly); schemas/openapi.yaml says so in words and
# as `format: money`, which schemathesis does not know for numbers. So the positive (schema-valid) cases it
# generates are given money the contract admits, and "schema-valid data is accepted" is checked with it.
# Negative cases are left as generated.
import schemathesis
from schemathesis.generation import GenerationMode

MAX_MONEY = 999_999_999_999_999


def exact_money(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value) > MAX_MONEY:
        return value
    if abs(value) >= 1e9:
        return float(round(value))  # 10 to 15 digits before the point: no room for decimals
    rounded = float(f"{value:.6f}")
    if rounded == 0 and value != 0:
        return 0.000001 if value > 0 else -0.000001  # keep the sign: amounts must be positive for most types
    return rounded


@schemathesis.hook
def map_case(context, case):
    meta = case.meta
    if meta is None or meta.generation.mode != GenerationMode.POSITIVE:
        return case
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("data"), dict):
        for field in ("amount", "mrr_impact"):
            if field in body["data"]:
                body["data"][field] = exact_money(body["data"][field])
    return case
