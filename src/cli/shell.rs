//! The interactive shell: multi-line statements ending with `;`, history in
//! `~/.df_variant_history`, `\q` / Ctrl-D to quit, Ctrl-C to drop the input.

use std::process::ExitCode;

use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use super::Session;

const HELP: &str = "\
Statements end with ';' and may span lines. Commands:
  \\q           quit (or Ctrl-D)
  \\?           this help
Try:
  SELECT variant_get(parse_json('{\"a\": {\"b\": 42}}'), '$.a.b', 'int');
  SELECT to_json(v) FROM read_json_variant('events.jsonl') LIMIT 5;
  COPY (SELECT v FROM read_json_variant('events.jsonl')) TO 'events.parquet';
  SELECT * FROM variant_shredding_schema('events.parquet');";

fn history_path() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".df_variant_history"))
}

/// Whether `buffer` holds a complete statement (ends with `;` outside quotes
/// and comments).
fn complete(buffer: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut last = None;
    let mut chars = buffer.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' | '`' => quote = Some(c),
                '-' if chars.peek() == Some(&'-') => {
                    for c in chars.by_ref() {
                        if c == '\n' {
                            break;
                        }
                    }
                    continue;
                }
                c if c.is_whitespace() => continue,
                _ => {}
            },
        }
        last = Some(c);
    }
    quote.is_none() && last == Some(';')
}

/// Runs the shell until `\q` or end of input.
pub async fn run(session: &Session) -> ExitCode {
    let mut editor = match DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("Error: cannot start the line editor: {e}");
            return ExitCode::FAILURE;
        }
    };
    let history = history_path();
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    println!(
        "df-variant {} (DataFusion 55.2) — SQL over Variant data. \\? for help, \\q to quit.",
        env!("CARGO_PKG_VERSION")
    );
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() { "> " } else { "  " };
        match editor.readline(prompt) {
            Ok(line) => {
                let trimmed = line.trim();
                if buffer.is_empty() {
                    match trimmed {
                        "" => continue,
                        "\\q" | "quit" | "exit" => break,
                        "\\?" | "\\h" | "help" => {
                            println!("{HELP}");
                            continue;
                        }
                        _ => {}
                    }
                }
                if !buffer.is_empty() {
                    buffer.push('\n');
                }
                buffer.push_str(&line);
                if complete(&buffer) {
                    let _ = editor.add_history_entry(buffer.as_str());
                    let sql = std::mem::take(&mut buffer);
                    // Errors are printed; the shell goes on.
                    session.run_script(&sql, "shell").await;
                }
            }
            Err(ReadlineError::Interrupted) => {
                buffer.clear();
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("Error: {e}");
                break;
            }
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::complete;

    #[test]
    fn statements_end_with_a_semicolon_outside_quotes() {
        assert!(complete("SELECT 1;"));
        assert!(complete("SELECT 1;  "));
        assert!(complete("SELECT 1; -- done"));
        assert!(!complete("SELECT ';'"));
        assert!(!complete("SELECT 1"));
        assert!(!complete("SELECT 'a;"));
        assert!(complete("SELECT 'a;';"));
    }
}
