import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[1]").config("spark.sql.session.timeZone","UTC").config("spark.ui.enabled","false").getOrCreate()
spark.sparkContext.setLogLevel("OFF")
# Like probe.py, but prints every row and every column with repr(), plus the result schema.
from pyspark.sql.types import VariantVal, Row
def fmt(x):
    if isinstance(x, VariantVal):
        try: return "VARIANT(" + str(x) + ")"
        except Exception as ex: return repr(x)
    if isinstance(x, Row): return "Row(" + ", ".join(f"{k}={fmt(v)}" for k, v in x.asDict().items()) + ")"
    if isinstance(x, (list, tuple)): return "[" + ", ".join(fmt(v) for v in x) + "]"
    if isinstance(x, dict): return "{" + ", ".join(f"{fmt(k)}: {fmt(v)}" for k, v in x.items()) + "}"
    return repr(x)
# A line starting with "SQL:" is run verbatim (no SELECT prefix).
for line in open(sys.argv[1]):
    e = line.strip()
    if not e or e.startswith('#'):
        print(line.rstrip()); continue
    q = e[4:].strip() if e.startswith("SQL:") else f"SELECT {e}"
    try:
        df = spark.sql(q)
        schema = ", ".join(f"{f.dataType.simpleString()}" for f in df.schema.fields)
        rows = df.collect()
        print(f"{e}\n  :: {schema}")
        if len(rows) == 1 and len(rows[0]) == 1:
            print(f"  => {fmt(rows[0][0])}")
        else:
            print(f"  => {len(rows)} rows")
            for r in rows:
                print(f"     ({', '.join(fmt(c) for c in r)})")
    except Exception as ex:
        cond = getattr(ex, 'getCondition', lambda: None)() or getattr(ex,'getErrorClass',lambda:None)()
        msg = " | ".join(l for l in str(ex).splitlines() if "Exception" in l or "ERROR" in l or "[" in l)[:400]
        if not cond and not msg.strip(): msg = type(ex).__name__ + ": " + (str(ex).splitlines() or [""])[0][:300]
        print(f"{e}\n  !! {cond}: {msg}")
