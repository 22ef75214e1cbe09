#!/usr/bin/env python3
"""Compares Spark 4.3.0's variant and JSON functions with df-variant's.

Lists the functions whose names hold `variant` or `json` in pyspark 4.3.0's
`SHOW FUNCTIONS`, and the functions df-variant registers (with the Spark
built-ins of `--spark`), then checks:

* that the list pinned in `src/udf/spark_functions.rs` (which `cargo test`
  checks against the registered functions and the README) is Spark's list;
* that every Spark function df-variant lacks is listed, with its reason, in the
  README's "Spark functions left out" section.

Usage: python3 interop/spark_functions.py [--bin target/debug/df-variant]
(needs `pip install pyspark==4.3.0` and Java 17). Exit code 1 on a mismatch.
"""
import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def spark_functions():
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    names = [r[0] for r in spark.sql("SHOW FUNCTIONS").collect()]
    version = spark.version
    spark.stop()
    return version, sorted(n for n in names if "variant" in n or "json" in n)


def our_functions(binary):
    out = subprocess.run(
        [binary, "--spark", "--format", "csv", "-c",
         "SELECT DISTINCT routine_name FROM information_schema.routines"],
        check=True, capture_output=True, text=True,
    ).stdout
    return {line.strip() for line in out.splitlines()[1:] if line.strip() and " rows in " not in line}


def pinned():
    text = (ROOT / "src/udf/spark_functions.rs").read_text()
    block = text.split("pub const SPARK_4_3_0: &[&str] = &[", 1)[1].split("];", 1)[0]
    return sorted(re.findall(r'"([a-z_]+)"', block))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / "target/debug/df-variant"))
    args = parser.parse_args()
    version, spark = spark_functions()
    ours = our_functions(args.bin)
    readme = (ROOT / "README.md").read_text()
    left_out = readme.split("### Spark functions left out", 1)[1].split("\n## ", 1)[0]
    ok = True
    print(f"Spark {version}: {len(spark)} variant and JSON functions")
    if pinned() != spark:
        ok = False
        print(f"MISMATCH: src/udf/spark_functions.rs pins {pinned()}, Spark has {spark}")
    for name in spark:
        if name in ours:
            print(f"  {name}: ours")
        elif f"`{name}`" in left_out:
            print(f"  {name}: left out (README says why)")
        else:
            ok = False
            print(f"  {name}: MISSING and not listed in the README")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
