//! `ALTER TABLE` on Delta tables: adding columns, setting table properties and
//! dropping table features, each one commit that changes the protocol and the
//! metadata as the Delta protocol requires ("if a new feature is enabled, the
//! protocol is upgraded; if a table feature is removed, the protocol is
//! downgraded").
//!
//! ```text
//! ALTER TABLE t ADD COLUMN v VARIANT            -- adds variantType (reader 3, writer 7)
//! ALTER TABLE t ADD COLUMNS (a BIGINT, w VARIANT)
//! ALTER TABLE t SET TBLPROPERTIES ('delta.enableVariantShredding' = 'true')
//!                                               -- adds variantShredding; new files shred
//! ALTER TABLE t DROP FEATURE variantShredding   -- rewrites shredded files unshredded
//! ALTER TABLE t DROP FEATURE variantType        -- when no VARIANT column is left
//! ```
//!
//! DataFusion 55 does not plan `ALTER TABLE` (`SessionContext::sql` has no hook
//! for statements it does not know), so these run where this crate parses the
//! SQL: [`crate::sql::query`], the CLI and the sqllogictest runner; in Rust,
//! [`alter_table`] takes the parsed statement. An embedder whose service calls
//! `ctx.sql` routes the one statement first:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> datafusion::error::Result<()> {
//! use df_variant::delta::alter::{alter_table, parse_alter};
//! let ctx = df_variant::variant_context();
//! let sql = "SELECT 1 AS one"; // or "ALTER TABLE t ADD COLUMN v VARIANT" on a Delta table
//! let df = match parse_alter(sql)? {
//!     Some(alter) => alter_table(&ctx, &alter).await?,
//!     None => ctx.sql(sql).await?,
//! };
//! assert_eq!(df.collect().await?[0].num_rows(), 1);
//! # Ok(())
//! # }
//! ```
//!
//! Dropping a feature follows the protocol's rule for removing a reader-writer
//! feature: no live file may still use it. For `variantShredding`, the live
//! files that store a VARIANT column shredded (their footers are read to find
//! them) are rewritten unshredded, each checked row by row against the old one,
//! and one commit removes them, adds the new files (`dataChange: false`),
//! clears the property and drops the feature; if anything fails, the new files
//! are deleted and the table is untouched. History is not truncated: versions
//! before the drop still list their files, so time travel to them needs a
//! reader with the feature.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, FieldRef, Schema};
use datafusion::catalog::Session;
use datafusion::common::{Result, exec_datafusion_err, plan_datafusion_err, plan_err};
use datafusion::dataframe::DataFrame;
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::object_store::ObjectStoreExt;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
use serde_json::{Value, json};

use super::log::{TableSnapshot, load_snapshot, store_path};
use super::log::{blocking, store_for};
use super::schema::schema_string;
use super::table::DeltaTable;
use super::write::{canonical_property, commit_alteration};
use crate::parquet::reshred::holds_variant;

/// One `ALTER TABLE` statement on a Delta table.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterStatement {
    /// The table, as registered in the session.
    pub table: String,
    /// What to change.
    pub operation: AlterOperation,
}

/// What an [`AlterStatement`] changes.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterOperation {
    /// `ADD COLUMN[S]`: names with their SQL type text.
    AddColumns(Vec<(String, String)>),
    /// `SET TBLPROPERTIES`.
    SetProperties(Vec<(String, String)>),
    /// `DROP FEATURE name`.
    DropFeature(String),
}

/// Parses `sql` when it is an `ALTER TABLE` statement of the forms above;
/// `None` for any other statement.
///
/// # Errors
/// An `ALTER TABLE` statement that is none of the forms above.
pub fn parse_alter(sql: &str) -> Result<Option<AlterStatement>> {
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize() else {
        return Ok(None);
    };
    let mut words: Vec<Token> = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    while matches!(words.last(), Some(Token::SemiColon)) {
        words.pop();
    }
    let is_kw = |t: Option<&Token>, kw: &str| matches!(t, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw));
    if !is_kw(words.first(), "alter") || !is_kw(words.get(1), "table") {
        return Ok(None);
    }
    let bad = |what: &str| {
        plan_datafusion_err!(
            "ALTER TABLE: {what} (supported: ADD COLUMN[S], SET TBLPROPERTIES, DROP FEATURE)"
        )
    };
    // The table name: identifiers joined by dots.
    let mut i = 2;
    let mut name = String::new();
    loop {
        match words.get(i) {
            Some(Token::Word(w)) => name.push_str(&w.value),
            _ => return Err(bad("expected a table name")),
        }
        i += 1;
        if matches!(words.get(i), Some(Token::Period)) {
            name.push('.');
            i += 1;
        } else {
            break;
        }
    }
    let text = |t: &Token| t.to_string();
    let rest = &words[i..];
    let operation = if is_kw(rest.first(), "add") {
        let mut j = 1;
        if is_kw(rest.get(j), "column") || is_kw(rest.get(j), "columns") {
            j += 1;
        }
        let list = &rest[j..];
        let inner: &[Token] = match (list.first(), list.last()) {
            (Some(Token::LParen), Some(Token::RParen)) => &list[1..list.len() - 1],
            _ => list,
        };
        // Split on commas outside parentheses (DECIMAL(10, 2)).
        let mut columns = Vec::new();
        let mut depth = 0i32;
        let mut current: Vec<&Token> = Vec::new();
        for t in inner.iter().chain(std::iter::once(&Token::Comma)) {
            match t {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                Token::Comma if depth == 0 => {
                    let Some((Token::Word(column), ty)) = current.split_first() else {
                        return Err(bad("expected a column name and type"));
                    };
                    if ty.is_empty() {
                        return Err(bad(&format!("column '{}' has no type", column.value)));
                    }
                    let ty: String = ty.iter().map(|t| text(t)).collect::<Vec<_>>().join(" ");
                    columns.push((column.value.clone(), ty));
                    current.clear();
                    continue;
                }
                _ => {}
            }
            current.push(t);
        }
        AlterOperation::AddColumns(columns)
    } else if is_kw(rest.first(), "set") && is_kw(rest.get(1), "tblproperties") {
        let list = &rest[2..];
        let (Some(Token::LParen), Some(Token::RParen)) = (list.first(), list.last()) else {
            return Err(bad("expected ('key' = 'value', ...)"));
        };
        let mut properties = Vec::new();
        for item in list[1..list.len() - 1].split(|t| matches!(t, Token::Comma)) {
            let literal = |t: Option<&Token>| match t {
                Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => {
                    Some(s.clone())
                }
                Some(Token::Word(w)) => Some(w.value.clone()),
                Some(Token::Number(n, _)) => Some(n.clone()),
                _ => None,
            };
            match (
                literal(item.first()),
                item.get(1),
                literal(item.get(2)),
                item.len(),
            ) {
                (Some(k), Some(Token::Eq), Some(v), 3) => properties.push((k, v)),
                _ => return Err(bad("expected ('key' = 'value', ...)")),
            }
        }
        AlterOperation::SetProperties(properties)
    } else if is_kw(rest.first(), "drop") && is_kw(rest.get(1), "feature") {
        let Some(Token::Word(feature)) = rest.get(2) else {
            return Err(bad("expected a feature name after DROP FEATURE"));
        };
        // `variantType-preview` tokenizes as a word, a minus and a word.
        let mut feature = feature.value.clone();
        let mut j = 3;
        while let (Some(Token::Minus), Some(Token::Word(w))) = (rest.get(j), rest.get(j + 1)) {
            feature.push('-');
            feature.push_str(&w.value);
            j += 2;
        }
        if is_kw(rest.get(j), "truncate") {
            return Err(bad(
                "TRUNCATE HISTORY is not implemented: the history before the drop is kept",
            ));
        }
        if j != rest.len() {
            return Err(bad("unexpected text after the feature name"));
        }
        AlterOperation::DropFeature(feature)
    } else {
        return Err(bad("unsupported operation"));
    };
    Ok(Some(AlterStatement {
        table: name,
        operation,
    }))
}

/// Runs an `ALTER TABLE` on a Delta table registered in `ctx` (and registers
/// the altered table again, so that its new columns show). Returns one row: the
/// new `version` and the `operation`.
///
/// # Errors
/// A table that is not a Delta table, a change the table cannot take (named),
/// or a concurrent commit.
pub async fn alter_table(ctx: &SessionContext, statement: &AlterStatement) -> Result<DataFrame> {
    let provider = ctx.table_provider(statement.table.as_str()).await?;
    let Some(table) = (provider.as_ref() as &dyn std::any::Any).downcast_ref::<DeltaTable>() else {
        return plan_err!(
            "ALTER TABLE works on Delta tables; '{}' is not one",
            statement.table
        );
    };
    if table.is_pinned() {
        return plan_err!(
            "ALTER TABLE: '{}' is pinned to a version; alter the table itself",
            statement.table
        );
    }
    let url = table.url().clone();
    let state = ctx.state();
    let store = store_for(&state, &url)?;
    let u = url.clone();
    let s = Arc::clone(&store);
    let snapshot = blocking(move || load_snapshot(s, &u, None)).await?;
    snapshot.check_writable()?;
    let mut rewrites: Vec<Value> = Vec::new();
    let (operation, protocol, metadata) = match &statement.operation {
        AlterOperation::AddColumns(columns) => {
            let mut fields: Vec<FieldRef> = snapshot.schema.fields().iter().cloned().collect();
            for (name, ty) in columns {
                if fields.iter().any(|f| f.name().eq_ignore_ascii_case(name)) {
                    return plan_err!("ALTER TABLE: column '{name}' already exists");
                }
                fields.push(field_of(ctx, name, ty).await?);
            }
            let schema = Schema::new(fields);
            let mut p = Protocol::of(&snapshot);
            if schema.fields().iter().any(|f| holds_variant(f)) {
                p.require("variantType", &["variantType", "variantType-preview"]);
            }
            let mut m = metadata_of(&snapshot)?;
            m["schemaString"] = json!(schema_string(&schema)?);
            ("ADD COLUMNS", p, Some(m))
        }
        AlterOperation::SetProperties(properties) => {
            let mut p = Protocol::of(&snapshot);
            let mut m = metadata_of(&snapshot)?;
            let mut configuration: HashMap<String, String> = snapshot.configuration.clone();
            for (k, v) in properties {
                let key = canonical_property(k)?;
                if let Some(feature) = key.strip_prefix("delta.feature.") {
                    if !v.eq_ignore_ascii_case("supported") && !v.eq_ignore_ascii_case("enabled") {
                        return plan_err!("table property '{key}' must be 'supported', got '{v}'");
                    }
                    if feature.starts_with("variantShredding") {
                        p.require("variantType", &["variantType", "variantType-preview"]);
                    }
                    p.require(feature, &[feature]);
                    continue;
                }
                let on = v.eq_ignore_ascii_case("true");
                if key == "delta.enableVariantShredding" && on {
                    p.require("variantType", &["variantType", "variantType-preview"]);
                    p.require(
                        "variantShredding",
                        &["variantShredding", "variantShredding-preview"],
                    );
                }
                if key == "delta.enableDeletionVectors" && on {
                    p.require("deletionVectors", &["deletionVectors"]);
                }
                configuration.insert(key.to_string(), v.clone());
            }
            m["configuration"] = json!(configuration);
            ("SET TBLPROPERTIES", p, Some(m))
        }
        AlterOperation::DropFeature(feature) => {
            let mut p = Protocol::of(&snapshot);
            if !p.has(feature) {
                return plan_err!(
                    "ALTER TABLE: the table does not have the feature '{feature}' (reader {:?}, writer {:?})",
                    p.reader,
                    p.writer
                );
            }
            let mut m = None;
            match feature.as_str() {
                "variantType" | "variantType-preview" => {
                    if let Some(c) = snapshot.schema.fields().iter().find(|f| holds_variant(f)) {
                        return plan_err!(
                            "ALTER TABLE: cannot drop '{feature}' while the VARIANT column '{}' exists",
                            c.name()
                        );
                    }
                    if p.has("variantShredding") || p.has("variantShredding-preview") {
                        return plan_err!(
                            "ALTER TABLE: drop the variantShredding feature before '{feature}'"
                        );
                    }
                }
                "variantShredding" | "variantShredding-preview" => {
                    // Live files that store a VARIANT column shredded are
                    // rewritten unshredded (checked row by row) in the same
                    // commit that drops the feature.
                    let shredded = shredded_files(&state, &snapshot).await?;
                    let files: Vec<&super::log::LogFile> = snapshot
                        .files
                        .iter()
                        .filter(|f| shredded.contains(&f.path))
                        .collect();
                    rewrites = super::write::rewrite_files(
                        ctx,
                        &snapshot,
                        &files,
                        crate::config::ShreddingMode::Off,
                    )
                    .await
                    .map(|r| r.actions)
                    .map_err(|e| {
                        plan_datafusion_err!(
                            "ALTER TABLE: cannot drop '{feature}': {}",
                            e.strip_backtrace()
                        )
                    })?;
                    let mut metadata = metadata_of(&snapshot)?;
                    let mut configuration = snapshot.configuration.clone();
                    configuration.remove("delta.enableVariantShredding");
                    metadata["configuration"] = json!(configuration);
                    m = Some(metadata);
                }
                "deletionVectors" => {
                    if let Some(f) = snapshot.files.iter().find(|f| f.deleted_count.is_some()) {
                        return plan_err!(
                            "ALTER TABLE: cannot drop 'deletionVectors': the live file {} has a deletion vector; rewriting it is not implemented",
                            f.path
                        );
                    }
                    let mut metadata = metadata_of(&snapshot)?;
                    let mut configuration = snapshot.configuration.clone();
                    configuration.remove("delta.enableDeletionVectors");
                    metadata["configuration"] = json!(configuration);
                    m = Some(metadata);
                }
                other => {
                    return plan_err!("ALTER TABLE: this writer cannot drop the feature '{other}'");
                }
            }
            p.remove(feature);
            ("DROP FEATURE", p, m)
        }
    };
    let mut actions = vec![json!({"commitInfo": {
        "timestamp": super::write::now_millis(),
        "operation": operation,
        "operationParameters": {},
        "isBlindAppend": false,
        "engineInfo": concat!("df-variant/", env!("CARGO_PKG_VERSION")),
    }})];
    if protocol.changed(&snapshot) {
        actions.push(json!({"protocol": protocol.action()}));
    }
    if let Some(m) = metadata {
        actions.push(json!({ "metaData": m }));
    }
    actions.extend(rewrites.iter().cloned());
    let version = snapshot.version + 1;
    if !commit_alteration(&store, &url, version, &actions).await? {
        return plan_err!(
            "ALTER TABLE: another commit made version {version} of {url} first; nothing was changed, run it again"
        );
    }
    // The table again, with its new schema.
    let reopened = DeltaTable::open(&state, url.as_str(), None).await?;
    ctx.deregister_table(statement.table.as_str())?;
    ctx.register_table(statement.table.as_str(), Arc::new(reopened))?;
    let batch = RecordBatch::try_from_iter(vec![
        (
            "version",
            Arc::new(Int64Array::from(vec![version as i64])) as _,
        ),
        (
            "operation",
            Arc::new(StringArray::from(vec![operation])) as _,
        ),
    ])?;
    ctx.read_batch(batch)
}

/// The field of a new column: its SQL type as the session plans it (`VARIANT`
/// included), nullable (Delta adds columns as nullable).
async fn field_of(ctx: &SessionContext, name: &str, ty: &str) -> Result<FieldRef> {
    if ty.to_ascii_lowercase().contains("not null") {
        return plan_err!("ALTER TABLE: an added column must be nullable ('{name}' {ty})");
    }
    let df = ctx
        .sql(&format!("SELECT CAST(NULL AS {ty}) AS c"))
        .await
        .map_err(|e| {
            plan_datafusion_err!(
                "ALTER TABLE: column '{name}' has an unknown type '{ty}': {}",
                e.strip_backtrace()
            )
        })?;
    let field = df.schema().field(0).as_ref().clone();
    Ok(Arc::new(field.with_name(name).with_nullable(true)))
}

/// The table's `metaData` action as it stands.
fn metadata_of(t: &TableSnapshot) -> Result<Value> {
    Ok(json!({
        "id": t.table_id,
        "format": {"provider": "parquet", "options": {}},
        "schemaString": t.schema_string,
        "partitionColumns": t.partition_columns,
        "configuration": t.configuration,
        "createdTime": t.created_time,
    }))
}

/// A protocol being changed: table features (reader 3, writer 7) once a feature
/// is added to a table on legacy versions.
#[derive(Debug, Clone, PartialEq)]
struct Protocol {
    reader_version: i32,
    writer_version: i32,
    reader: Vec<String>,
    writer: Vec<String>,
}

/// Reader features: those that are also writer features and that readers must
/// know (the rest are writer-only).
const READER_WRITER: &[&str] = &[
    "variantType",
    "variantType-preview",
    "variantShredding",
    "variantShredding-preview",
    "deletionVectors",
    "columnMapping",
    "timestampNtz",
    "v2Checkpoint",
    "vacuumProtocolCheck",
    "typeWidening",
];

impl Protocol {
    fn of(t: &TableSnapshot) -> Self {
        Self {
            reader_version: t.min_reader_version,
            writer_version: t.min_writer_version,
            reader: t.reader_features.clone(),
            writer: t.writer_features.clone(),
        }
    }

    fn has(&self, feature: &str) -> bool {
        self.writer.iter().any(|f| f == feature) || self.reader.iter().any(|f| f == feature)
    }

    /// Adds `feature` unless one of `any` is there; a legacy protocol becomes
    /// table features first, with the features its versions imply.
    fn require(&mut self, feature: &str, any: &[&str]) {
        if any.iter().any(|f| self.has(f)) {
            return;
        }
        if self.writer_version < 7 {
            let implied: &[(i32, &[&str])] = &[
                (2, &["appendOnly", "invariants"]),
                (3, &["checkConstraints"]),
                (4, &["changeDataFeed", "generatedColumns"]),
                (5, &["columnMapping"]),
                (6, &["identityColumns"]),
            ];
            for (v, names) in implied {
                if self.writer_version >= *v {
                    self.writer.extend(names.iter().map(|s| (*s).to_string()));
                }
            }
            if self.reader_version >= 2 {
                self.reader.push("columnMapping".to_string());
            }
            self.reader_version = 3;
            self.writer_version = 7;
        }
        if READER_WRITER.contains(&feature) {
            self.reader.push(feature.to_string());
        }
        self.writer.push(feature.to_string());
    }

    fn remove(&mut self, feature: &str) {
        self.reader.retain(|f| f != feature);
        self.writer.retain(|f| f != feature);
    }

    fn changed(&self, t: &TableSnapshot) -> bool {
        *self != Self::of(t)
    }

    fn action(&self) -> Value {
        if self.reader_version >= 3 {
            json!({"minReaderVersion": self.reader_version, "minWriterVersion": self.writer_version,
                   "readerFeatures": self.reader, "writerFeatures": self.writer})
        } else {
            json!({"minReaderVersion": self.reader_version, "minWriterVersion": self.writer_version,
                   "writerFeatures": self.writer})
        }
    }
}

/// The live files whose footers show a VARIANT column stored shredded.
async fn shredded_files(state: &dyn Session, t: &TableSnapshot) -> Result<Vec<String>> {
    let variant: Vec<String> = t
        .variant_columns()
        .iter()
        .map(|c| t.physical_name(c).to_string())
        .collect();
    if variant.is_empty() {
        return Ok(Vec::new());
    }
    let store = store_for(state, &t.url)?;
    let mut out = Vec::new();
    for f in &t.files {
        let location = store_path(&t.url, Some(&f.path))?;
        let meta = store
            .head(&location)
            .await
            .map_err(|e| exec_datafusion_err!("ALTER TABLE: cannot read {}: {e}", f.path))?;
        crate::parquet::check_parquet_footer(store.as_ref(), &meta).await?;
        let metadata = DFParquetMetadata::new(store.as_ref(), &meta)
            .fetch_metadata()
            .await?;
        let schema = parquet::arrow::parquet_to_arrow_schema(
            metadata.file_metadata().schema_descr(),
            metadata.file_metadata().key_value_metadata(),
        )?;
        let shredded = variant.iter().any(|c| {
            schema.field_with_name(c).is_ok_and(|f| {
                matches!(f.data_type(), DataType::Struct(fs) if fs.find("typed_value").is_some())
            })
        });
        if shredded {
            out.push(f.path.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_supported_forms_and_names_what_is_not() {
        let p = |s: &str| parse_alter(s).unwrap().unwrap().operation;
        assert_eq!(
            p("alter table t add column v VARIANT;"),
            AlterOperation::AddColumns(vec![("v".into(), "VARIANT".into())])
        );
        assert_eq!(
            p("ALTER TABLE s.t ADD COLUMNS (a DECIMAL(10, 2), w variant)"),
            AlterOperation::AddColumns(vec![
                ("a".into(), "DECIMAL ( 10 , 2 )".into()),
                ("w".into(), "variant".into())
            ])
        );
        assert_eq!(
            p("ALTER TABLE t SET TBLPROPERTIES ('delta.enableVariantShredding' = 'true')"),
            AlterOperation::SetProperties(vec![(
                "delta.enableVariantShredding".into(),
                "true".into()
            )])
        );
        assert_eq!(
            p("ALTER TABLE t DROP FEATURE variantShredding-preview"),
            AlterOperation::DropFeature("variantShredding-preview".into())
        );
        assert!(parse_alter("SELECT 1").unwrap().is_none());
        for bad in [
            "ALTER TABLE t RENAME TO u",
            "ALTER TABLE t DROP FEATURE variantType TRUNCATE HISTORY",
            "ALTER TABLE t SET TBLPROPERTIES ('a')",
            "ALTER TABLE t ADD COLUMN v",
        ] {
            let err = parse_alter(bad).unwrap_err().to_string();
            assert!(err.contains("ALTER TABLE"), "{bad}: {err}");
        }
    }
}
