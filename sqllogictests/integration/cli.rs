//! The `df-variant` binary as a user runs it: `-c`, `-f`, output formats, piped
//! shell input ending with EOF (Ctrl-D), one-line errors with a non-zero exit
//! code, and the demo.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn cli(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_df-variant"))
        .args(args)
        .env("HOME", std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start df-variant");
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input); // EOF, like Ctrl-D
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn commands_print_variants_as_json_in_every_format() {
    let sql = r#"SELECT parse_json('{"b": [1, 2.50], "a": "x"}') AS v, 7 AS n"#;
    let out = cli(
        &[
            "-q",
            "--format",
            "ndjson",
            "-c",
            sql,
            "-c",
            "SELECT 'two' AS s",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "{\"v\":{\"a\":\"x\",\"b\":[1,2.5]},\"n\":7}\n{\"s\":\"two\"}\n"
    );
    assert_eq!(text(&out.stderr), "");

    let out = cli(&["-q", "--format", "csv", "-c", sql], None);
    assert_eq!(
        text(&out.stdout),
        "v,n\n\"{\"\"a\"\":\"\"x\"\",\"\"b\"\":[1,2.5]}\",7\n"
    );

    let out = cli(&["--format", "json", "-c", sql], None);
    assert_eq!(
        text(&out.stdout),
        "[{\"v\":{\"a\":\"x\",\"b\":[1,2.5]},\"n\":7}]\n"
    );
    assert!(
        text(&out.stderr).starts_with("1 row in "),
        "{}",
        text(&out.stderr)
    );

    let out = cli(&["-c", sql], None);
    let table = text(&out.stdout);
    assert!(
        table.contains(r#"| {"a":"x","b":[1,2.5]} | 7 |"#),
        "{table}"
    );
}

#[test]
fn errors_are_one_line_with_a_failing_exit_code() {
    let out = cli(
        &["-c", "SELECT variant_get(parse_json('1'), '$.a[', 'int')"],
        None,
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("Error: ") && err.contains("INVALID_VARIANT_GET_PATH"),
        "{err}"
    );

    // A run-time data error names the row.
    let out = cli(
        &[
            "-c",
            "SELECT variant_get(parse_json(j), '$', 'int') FROM (VALUES ('1'), ('\"x\"')) t(j)",
        ],
        None,
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("INVALID_VARIANT_CAST"),
        "{}",
        text(&out.stderr)
    );

    // The second statement of a script fails; the first ran.
    let out = cli(
        &["-q", "--format", "csv", "-c", "SELECT 1 AS a; SELECT nope"],
        None,
    );
    assert!(!out.status.success());
    assert_eq!(text(&out.stdout), "a\n1\n");
    assert!(
        text(&out.stderr).starts_with("Error (-c, statement 2): "),
        "{}",
        text(&out.stderr)
    );

    let out = cli(&["-f", "/no/such/file.sql"], None);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("cannot read /no/such/file.sql"));
}

#[test]
fn files_run_in_order_after_commands() {
    let path = std::env::temp_dir().join(format!("df_variant_cli_{}.sql", std::process::id()));
    std::fs::write(
        &path,
        "CREATE TABLE t AS SELECT parse_json('{\"k\": 1}') AS v;\n-- a comment\nSELECT to_json(v) AS j FROM t;\n",
    )
    .unwrap();
    let out = cli(
        &[
            "-q",
            "--format",
            "csv",
            "-c",
            "SELECT 0 AS first",
            "-f",
            path.to_str().unwrap(),
        ],
        None,
    );
    std::fs::remove_file(&path).unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "first\n0\nj\n\"{\"\"k\"\":1}\"\n");
}

#[test]
fn piped_shell_runs_multi_line_statements_and_survives_errors() {
    let input = "SELECT 1 AS a,\n  2 AS b;\nSELECT nope;\n\\?\nSELECT 'after' AS c;\n";
    let out = cli(&["-q", "--format", "csv"], Some(input));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("a,b\n1,2\n"), "{stdout}");
    assert!(stdout.contains("Statements end with ';'"), "{stdout}");
    assert!(stdout.contains("c\nafter\n"), "{stdout}");
    assert!(text(&out.stderr).contains("Error: Schema error: No field named nope"));
}

#[test]
fn demo_runs_end_to_end() {
    let out = cli(&["--demo", "--demo-rows", "3000"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for needle in [
        "== Ingest",
        "| 3000  |",
        "STRUCT<commit: STRUCT<",
        "app.bsky.feed.like",
        "OBJECT<cid: STRING, uri: STRING>",
        "physical_plan",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in\n{stdout}");
    }
}

#[test]
fn spark_mode_by_flag_or_setting() {
    // Spark's functions, and Spark's TIMESTAMP: 10:20:30 in New York.
    let sql = "SET datafusion.execution.time_zone = 'America/New_York'; \
               SELECT sha2('abc', 256) AS h, \
               variant_get(CAST(TIMESTAMP '2024-01-15 10:20:30' AS VARIANT), '$', 'bigint') AS t";
    let digest =
        "h,t\nba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad,1705332030\n";
    let out = cli(&["-q", "--format", "csv", "--spark", "-c", sql], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), digest);

    let out = cli(&["-q", "--format", "csv", "-c", sql], None);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("Invalid function 'sha2'"));

    let script = format!("SET variant.spark_functions = true; {sql}");
    let out = cli(&["-q", "--format", "csv", "-c", &script], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), digest);
}

#[test]
fn generates_the_reference_bluesky_events() {
    let out = cli(&["generate-bluesky", "--rows", "3"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 3);
    // The first event of seed 1, as bluesky_gen.py writes it.
    assert!(
        stdout.starts_with(
            "{\"did\":\"did:plc:nqukl6eqkknltqv5urdixza6\",\"time_us\":1732206349000222,"
        ),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).starts_with("3 events, "),
        "{}",
        text(&out.stderr)
    );
}

fn cli_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_df-variant"));
    cmd.args(args).env("HOME", std::env::temp_dir());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null()).output().expect("start df-variant")
}

fn count(dir: &str) -> String {
    let out = cli(
        &[
            "-q",
            "--format",
            "csv",
            "-c",
            &format!("SELECT count(*) AS n FROM '{dir}'"),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// A multi-file `COPY` to a directory killed between its renames (the process
/// aborts, as under `kill -9`) leaves none of its rows visible to our reader,
/// before or after a later `COPY` to the same directory.
#[test]
fn a_copy_killed_while_committing_is_invisible() {
    let dir = std::env::temp_dir().join(format!("df_variant_cli_atomic_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir = format!("{}/", dir.display());
    let copy = |rows: u32| {
        format!(
            "COPY (SELECT i AS id, parse_json('{{\"a\":' || i || '}}') AS v FROM generate_series(1, {rows}) t(i)) TO '{dir}' STORED AS PARQUET"
        )
    };
    // Small batches and files: a statement writes many files.
    let small = [
        "-q",
        "-c",
        "SET datafusion.execution.batch_size = 100",
        "-c",
        "SET datafusion.execution.soft_max_rows_per_output_file = 100",
    ];
    let out = cli(&[&small[..], &["-c", &copy(300)]].concat(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(count(&dir), "n\n300\n");

    let out = cli_env(
        &[&small[..], &["-c", &copy(5000)]].concat(),
        &[("DF_VARIANT_FAILPOINT", "after_first_rename")],
    );
    assert!(!out.status.success(), "the fault injection did not fire");
    // Some of its files are in place: other readers would see them, ours not.
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert!(files > 4, "{files} entries");
    assert_eq!(count(&dir), "n\n300\n");

    let out = cli(&[&small[..], &["-c", &copy(200)]].concat(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(count(&dir), "n\n500\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Delta INSERT whose process dies after writing its data files and before its
/// log entry (as under `kill -9`) adds nothing: the files are not in the log, and
/// later writes and reads are unaffected.
#[test]
fn a_delta_insert_killed_before_its_commit_adds_nothing() {
    let dir =
        std::env::temp_dir().join(format!("df_variant_cli_delta_kill_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let table = dir.display().to_string();
    let open = format!("CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION '{table}'");
    let insert = |rows: u32| {
        format!(
            "INSERT INTO t SELECT i AS id, parse_json('{{\"a\":' || i || '}}') AS v FROM generate_series(1, {rows}) t(i)"
        )
    };
    let count = || {
        let out = cli(
            &[
                "-q",
                "--format",
                "csv",
                "-c",
                &open,
                "-c",
                "SELECT count(*) AS n FROM t",
            ],
            None,
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let create = format!(
        "COPY (SELECT CAST(1 AS BIGINT) AS id, parse_json('{{\"a\":1}}') AS v) TO '{table}' STORED AS DELTA"
    );
    let out = cli(&["-q", "-c", &create], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(count(), "n\n1\n");
    let data_files = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "parquet")
            })
            .count()
    };
    let before = data_files();

    let out = cli_env(
        &["-q", "-c", &open, "-c", &insert(1000)],
        &[("DF_VARIANT_FAILPOINT", "before_delta_commit")],
    );
    assert!(!out.status.success(), "the fault injection did not fire");
    assert!(
        data_files() > before,
        "the killed INSERT wrote no data file"
    );
    assert_eq!(count(), "n\n1\n");

    let out = cli(&["-q", "-c", &open, "-c", &insert(10)], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(count(), "n\n11\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--memory-limit`: a query over its limit spills or fails with a clear
/// error, and never takes the memory it asks for.
#[test]
fn memory_limit_spills_or_fails_clearly() {
    let sql = "SELECT count(*) AS n FROM (SELECT i % 200000 AS k, count(*) FROM generate_series(1, 2000000) t(i) GROUP BY k)";
    let out = cli(
        &["-q", "--format", "csv", "--memory-limit", "16M", "-c", sql],
        None,
    );
    let stderr = text(&out.stderr);
    if out.status.success() {
        assert_eq!(text(&out.stdout), "n\n200000\n");
    } else {
        assert!(stderr.contains("Resources exhausted"), "{stderr}");
    }
    // The issue's query: 2M distinct strings in 4 groups, whose distinct sets
    // DataFusion keeps whole per group; at 64M it fails at once, saying what
    // the limit was and what to change.
    let sql = "SELECT g, count(*) AS n, count(DISTINCT s) AS d FROM (SELECT value % 4 AS g, \
               'did:plc:' || value AS s FROM generate_series(1, 2000000)) GROUP BY g ORDER BY g";
    let out = cli(
        &["-q", "--format", "csv", "--memory-limit", "64M", "-c", sql],
        None,
    );
    let stderr = text(&out.stderr);
    if out.status.success() {
        assert!(text(&out.stdout).starts_with("g,n,d\n0,500000,500000\n"));
    } else {
        assert!(
            stderr.contains("memory limit of 64.0 MB: raise it (`--memory-limit` in the CLI"),
            "{stderr}"
        );
    }
    let out = cli(&["--memory-limit", "lots", "-c", "SELECT 1"], None);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("'lots' is not a memory size"),
        "{}",
        text(&out.stderr)
    );
}

/// `variant_reshred` killed after checking its first file (before any rename),
/// and killed after its first rename: the table reads the same rows each time,
/// every file is wholly old or wholly new, and a later run clears what the
/// killed one left and finishes.
#[test]
fn a_reshred_killed_midway_loses_nothing() {
    let dir = std::env::temp_dir().join(format!("df_variant_cli_reshred_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = format!("{}/", dir.display());
    for f in 0..3 {
        let out = cli(
            &[
                "-q",
                "-c",
                &format!(
                    "COPY (SELECT i AS id, parse_json('{{\"a\":' || i || ',\"b\":\"s' || (i % 7) || '\",\"n\":null}}') AS v FROM generate_series({}, {}) t(i)) TO '{dir}part-{f}.parquet' OPTIONS ('variant.shredding_schema' 'STRUCT<b: STRING>')",
                    f * 1000,
                    f * 1000 + 999
                ),
            ],
            None,
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let digest = || {
        let out = cli(
            &[
                "-q",
                "--format",
                "csv",
                "-c",
                &format!(
                    "SELECT count(*) AS n, sum(length(to_json(v))) AS len, min(to_json(v)) AS lo, max(to_json(v)) AS hi, sum(v:a::bigint) AS a FROM '{dir}'"
                ),
            ],
            None,
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let shredding = || {
        let out = cli(
            &[
                "-q",
                "--format",
                "csv",
                "-c",
                &format!("SELECT shredding FROM variant_shredding_schema('{dir}') ORDER BY file"),
            ],
            None,
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let before = digest();
    let reshred = format!("SELECT variant_reshred('{dir}', 'STRUCT<a: BIGINT, b: STRING>') AS r");
    for point in ["reshred_after_first_check", "reshred_after_first_rename"] {
        let out = cli_env(&["-q", "-c", &reshred], &[("DF_VARIANT_FAILPOINT", point)]);
        assert!(
            !out.status.success(),
            "{point}: the fault injection did not fire"
        );
        assert_eq!(digest(), before, "{point}");
        let layouts = shredding();
        for line in layouts.lines().skip(1) {
            assert!(
                line == "STRUCT<b: STRING>" || line == "\"STRUCT<a: BIGINT, b: STRING>\"",
                "{point}: {layouts}"
            );
        }
    }
    let out = cli(&["-q", "-c", &reshred], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(digest(), before);
    assert_eq!(
        shredding(),
        "shredding\n\"STRUCT<a: BIGINT, b: STRING>\"\n\"STRUCT<a: BIGINT, b: STRING>\"\n\"STRUCT<a: BIGINT, b: STRING>\"\n"
    );
    // Nothing but the three files is left.
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 3, "{entries:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// One shell session over a folder that other processes change between its
/// statements: each statement sees the folder as it is now (DataFusion keeps a
/// folder's listing for the session; the CLI reads it afresh), so a file added
/// from outside is counted and a removed one is neither read nor an error.
#[test]
fn a_session_sees_files_added_and_removed_from_outside() {
    use std::io::{BufRead, BufReader};
    let dir = std::env::temp_dir().join(format!("df_variant_cli_outside_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir = format!("{}/", dir.display());
    let write = |file: &str, rows: u32| {
        let out = cli(
            &[
                "-q",
                "-c",
                &format!(
                    "COPY (SELECT parse_json('{{\"i\":' || value || '}}') AS v FROM generate_series(1, {rows})) TO '{dir}{file}' STORED AS PARQUET"
                ),
            ],
            None,
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    write("a.parquet", 10);
    let mut shell = Command::new(env!("CARGO_BIN_EXE_df-variant"))
        .args(["-q", "--format", "csv"])
        .env("HOME", std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start df-variant");
    let mut input = shell.stdin.take().unwrap();
    let mut output = BufReader::new(shell.stdout.take().unwrap()).lines();
    let mut count = || {
        writeln!(
            input,
            "SELECT count(*) AS n, sum(v:i::int) AS s FROM '{dir}';"
        )
        .unwrap();
        input.flush().unwrap();
        // The header line, then the row.
        loop {
            let line = output.next().expect("an answer").unwrap();
            if line == "n,s" {
                return output.next().expect("a row").unwrap();
            }
        }
    };
    assert_eq!(count(), "10,55");
    write("b.parquet", 3);
    assert_eq!(count(), "13,61", "a file added from outside");
    std::fs::remove_file(format!("{dir}a.parquet")).unwrap();
    assert_eq!(count(), "3,6", "a file removed from outside");
    drop(input);
    let out = shell.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Hidden files (`.x.parquet`, macOS's `._x.parquet`, `_x.parquet`, files in a
/// `_tmp/` folder) are not part of a folder, as Spark and `read_json_variant`
/// read one: a stale one no longer breaks `FROM 'dir/'`, and one named on its
/// own is still read.
#[test]
fn a_folders_hidden_files_are_left_out() {
    let dir = std::env::temp_dir().join(format!("df_variant_cli_hidden_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = format!("{}/", dir.display());
    let out = cli(
        &[
            "-q",
            "-c",
            &format!(
                "COPY (SELECT parse_json('{{\"x\":1}}') AS v) TO '{d}a.parquet' STORED AS PARQUET"
            ),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    for copy in ["_b.parquet", ".c.parquet", "_tmp/d.parquet"] {
        std::fs::create_dir_all(dir.join(copy).parent().unwrap()).unwrap();
        std::fs::copy(dir.join("a.parquet"), dir.join(copy)).unwrap();
    }
    std::fs::write(dir.join(".stale.parquet"), b"garbage").unwrap();
    std::fs::write(dir.join("._a.parquet"), b"\x00\x05\x16\x07AppleDouble").unwrap();
    let out = cli(
        &[
            "-q",
            "--format",
            "csv",
            "-c",
            &format!("SELECT count(*) AS n FROM '{d}'"),
            "-c",
            &format!("CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{d}'"),
            "-c",
            "SELECT count(*) AS n FROM t",
            "-c",
            &format!("SELECT count(*) AS n FROM '{d}.c.parquet'"),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "n\n1\nn\n1\nn\n1\n");
    let _ = std::fs::remove_dir_all(&dir);
}
