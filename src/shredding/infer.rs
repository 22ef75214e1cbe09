//! Inference: choosing a `typed_value` schema (typed shape) for a Variant column
//! from its first rows ([`infer_typed_value`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use parquet_variant::Variant;

use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, Field, Fields, TimeUnit};

use super::Result;
use super::rows::{Container, RowReader, basic_type, field_name, primitive};
use crate::array::VariantInput;

/// Options for [`infer_typed_value`].
#[derive(Clone, Debug)]
pub struct ShreddingOptions {
    /// How many leading rows of the column are sampled (default 4096).
    pub sample_rows: usize,
    /// Object fields present in fewer than this fraction of the sampled objects (at
    /// their level) are not shredded and stay in `value` (default 0.1).
    pub min_field_fraction: f64,
    /// The most shredded leaf columns; the rarest fields are dropped first
    /// (default 128).
    pub max_leaves: usize,
}

impl Default for ShreddingOptions {
    fn default() -> Self {
        Self {
            sample_rows: 4096,
            min_field_fraction: 0.1,
            max_leaves: 128,
        }
    }
}

/// Deepest nesting inference looks into; deeper values are never shredded.
const MAX_INFER_DEPTH: usize = 64;

// ---------------------------------------------------------------------------
// Inference
// ---------------------------------------------------------------------------

/// What was seen at one position (the top level, an object field, array elements).
#[derive(Default, Debug)]
struct Stats {
    bools: usize,
    ints: usize,
    decimals: usize,
    floats: usize,
    doubles: usize,
    strings: usize,
    binaries: usize,
    dates: usize,
    times: usize,
    ts: usize,
    ts_ntz: usize,
    ts_nanos: usize,
    ts_ntz_nanos: usize,
    /// Kinds that are never shredded (uuid, values nested too deep).
    others: usize,
    int_min: i64,
    int_max: i64,
    /// Most digits before the decimal point among integers and decimals.
    int_digits: u32,
    /// Largest decimal scale.
    scale: u8,
    objects: usize,
    fields: BTreeMap<String, FieldStats>,
    arrays: usize,
    elements: Option<Box<Stats>>,
}

#[derive(Default, Debug)]
struct FieldStats {
    /// Objects holding the field (a Variant null counts as present).
    present: usize,
    stats: Stats,
}

fn digits(v: u128) -> u32 {
    if v == 0 { 0 } else { v.ilog10() + 1 }
}

impl Stats {
    fn observe(&mut self, dict: &[&str], bytes: &[u8], depth: usize) -> Result<()> {
        match basic_type(bytes)? {
            2 | 3 if depth >= MAX_INFER_DEPTH => self.others += 1,
            2 => {
                self.objects += 1;
                let c = Container::new(bytes)?;
                for i in 0..c.n {
                    let name = field_name(dict, c.id(i)?)?;
                    let f = self.fields.entry(name.to_string()).or_default();
                    f.present += 1;
                    f.stats.observe(dict, c.child(i)?, depth + 1)?;
                }
            }
            3 => {
                self.arrays += 1;
                let c = Container::new(bytes)?;
                let elements = self.elements.get_or_insert_with(Default::default);
                for i in 0..c.n {
                    elements.observe(dict, c.child(i)?, depth + 1)?;
                }
            }
            _ => self.observe_primitive(&primitive(bytes)?),
        }
        Ok(())
    }

    fn observe_int(&mut self, v: i64) {
        if self.ints == 0 {
            self.int_min = v;
            self.int_max = v;
        } else {
            self.int_min = self.int_min.min(v);
            self.int_max = self.int_max.max(v);
        }
        self.ints += 1;
        self.int_digits = self.int_digits.max(digits(v.unsigned_abs() as u128));
    }

    fn observe_decimal(&mut self, unscaled: i128, scale: u8) {
        self.decimals += 1;
        self.scale = self.scale.max(scale);
        let d = digits(unscaled.unsigned_abs()).saturating_sub(scale as u32);
        self.int_digits = self.int_digits.max(d);
    }

    fn observe_primitive(&mut self, v: &Variant<'_, '_>) {
        match v {
            Variant::Null => {}
            Variant::BooleanTrue | Variant::BooleanFalse => self.bools += 1,
            Variant::Int8(i) => self.observe_int(*i as i64),
            Variant::Int16(i) => self.observe_int(*i as i64),
            Variant::Int32(i) => self.observe_int(*i as i64),
            Variant::Int64(i) => self.observe_int(*i),
            Variant::Decimal4(d) => self.observe_decimal(d.integer() as i128, d.scale()),
            Variant::Decimal8(d) => self.observe_decimal(d.integer() as i128, d.scale()),
            Variant::Decimal16(d) => self.observe_decimal(d.integer(), d.scale()),
            Variant::Float(_) => self.floats += 1,
            Variant::Double(_) => self.doubles += 1,
            Variant::String(_) | Variant::ShortString(_) => self.strings += 1,
            Variant::Binary(_) => self.binaries += 1,
            Variant::Date(_) => self.dates += 1,
            Variant::Time(_) => self.times += 1,
            Variant::TimestampMicros(_) => self.ts += 1,
            Variant::TimestampNtzMicros(_) => self.ts_ntz += 1,
            Variant::TimestampNanos(_) => self.ts_nanos += 1,
            Variant::TimestampNtzNanos(_) => self.ts_ntz_nanos += 1,
            Variant::Uuid(_) | Variant::Object(_) | Variant::List(_) => self.others += 1,
        }
    }

    /// The typed shape of the kind most non-null values seen here have, when it
    /// is a strict majority; `None` when there were none, or no kind has more
    /// than half of them (the others stay in `value`).
    fn infer(&self, options: &ShreddingOptions) -> Option<Node> {
        let kinds = [
            self.bools,
            self.ints + self.decimals,
            self.floats,
            self.doubles,
            self.strings,
            self.binaries,
            self.dates,
            self.times,
            self.ts,
            self.ts_ntz,
            self.ts_nanos,
            self.ts_ntz_nanos,
            self.others,
            self.objects,
            self.arrays,
        ];
        let total: usize = kinds.iter().sum();
        let (kind, &count) = kinds
            .iter()
            .enumerate()
            .max_by_key(|(i, c)| (**c, usize::MAX - i))?;
        if count == 0 || count * 2 <= total {
            return None;
        }
        let prim = |t: DataType| Some(Node::Prim(t));
        match kind {
            0 => prim(DataType::Boolean),
            1 if self.decimals > 0 => {
                let scale = self.scale;
                let needed = (self.int_digits + scale as u32).max(1);
                let precision = match needed {
                    0..=9 => 9,
                    10..=18 => 18,
                    19..=38 => 38,
                    _ => return None,
                };
                prim(DataType::Decimal128(precision, scale as i8))
            }
            1 => {
                let (lo, hi) = (self.int_min, self.int_max);
                let fits = |min: i64, max: i64| lo >= min && hi <= max;
                // Never narrower than Int32: Parquet stores INT(8)/INT(16) as INT32
                // anyway, and a wider column keeps later, larger values typed
                // (prunable, read without the residual) instead of in `value`.
                prim(if fits(i32::MIN as i64, i32::MAX as i64) {
                    DataType::Int32
                } else {
                    DataType::Int64
                })
            }
            2 => prim(DataType::Float32),
            3 => prim(DataType::Float64),
            4 => prim(DataType::Utf8),
            5 => prim(DataType::Binary),
            6 => prim(DataType::Date32),
            7 => prim(DataType::Time64(TimeUnit::Microsecond)),
            8 => prim(DataType::Timestamp(
                TimeUnit::Microsecond,
                Some("UTC".into()),
            )),
            9 => prim(DataType::Timestamp(TimeUnit::Microsecond, None)),
            10 => prim(DataType::Timestamp(
                TimeUnit::Nanosecond,
                Some("UTC".into()),
            )),
            11 => prim(DataType::Timestamp(TimeUnit::Nanosecond, None)),
            12 => None,
            13 => {
                let threshold = options.min_field_fraction * self.objects as f64;
                let fields: Vec<(String, usize, Node)> = self
                    .fields
                    .iter()
                    // The empty key stays in the residual: a reader's field
                    // access (DataFusion's `get_field`) cannot name it.
                    .filter(|(name, f)| {
                        !name.is_empty() && f.present > 0 && f.present as f64 >= threshold
                    })
                    .filter_map(|(name, f)| {
                        Some((name.clone(), f.present, f.stats.infer(options)?))
                    })
                    .collect();
                (!fields.is_empty()).then_some(Node::Struct(fields))
            }
            _ => {
                let element = self.elements.as_ref()?.infer(options)?;
                Some(Node::List(Box::new(element)))
            }
        }
    }
}

/// An inferred typed shape, with each object field's occurrence count.
#[derive(Debug)]
enum Node {
    Prim(DataType),
    Struct(Vec<(String, usize, Node)>),
    List(Box<Node>),
}

/// One step of a path to an object field inside a [`Node`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Field(String),
    Element,
}

impl Node {
    /// Every object field in pre-order, with its parent field and its number of
    /// leaves; returns the leaves of `self`.
    fn collect_fields(
        &self,
        path: &mut Vec<Step>,
        parent: Option<usize>,
        out: &mut Vec<FieldInfo>,
    ) -> usize {
        match self {
            Node::Prim(_) => 1,
            Node::Struct(fields) => {
                let mut total = 0;
                for (name, count, child) in fields {
                    path.push(Step::Field(name.clone()));
                    let at = out.len();
                    out.push(FieldInfo {
                        count: *count,
                        path: path.clone(),
                        parent,
                        leaves: 0,
                    });
                    let leaves = child.collect_fields(path, Some(at), out);
                    out[at].leaves = leaves;
                    total += leaves;
                    path.pop();
                }
                total
            }
            Node::List(e) => {
                path.push(Step::Element);
                let leaves = e.collect_fields(path, parent, out);
                path.pop();
                leaves
            }
        }
    }

    /// Drops the fields marked in `removed`, indexed in the pre-order of
    /// [`Self::collect_fields`] (`next` counts the fields visited).
    fn drop_fields(&mut self, removed: &[bool], next: &mut usize) {
        match self {
            Node::Prim(_) => {}
            Node::Struct(fields) => fields.retain_mut(|(_, _, child)| {
                let at = *next;
                *next += 1;
                child.drop_fields(removed, next);
                !removed.get(at).copied().unwrap_or(false)
            }),
            Node::List(e) => e.drop_fields(removed, next),
        }
    }

    /// The typed shape; objects left without fields disappear (`None`).
    fn into_data_type(self) -> Option<DataType> {
        match self {
            Node::Prim(t) => Some(t),
            Node::Struct(fields) => {
                let fields: Vec<Field> = fields
                    .into_iter()
                    .filter_map(|(name, _, n)| Some(Field::new(name, n.into_data_type()?, true)))
                    .collect();
                (!fields.is_empty()).then(|| DataType::Struct(Fields::from(fields)))
            }
            Node::List(e) => {
                let t = e.into_data_type()?;
                Some(DataType::List(Arc::new(Field::new("element", t, true))))
            }
        }
    }
}

/// An object field of a [`Node`] while [`limit_leaves`] chooses what to drop.
struct FieldInfo {
    count: usize,
    path: Vec<Step>,
    /// The enclosing field, if any (through lists).
    parent: Option<usize>,
    /// Leaves of the field's subtree still kept.
    leaves: usize,
}

/// Drops the rarest object fields until at most `max_leaves` leaves remain. Ties
/// drop deeper fields first, then by path (descending), so the result is
/// deterministic. One sort and one pass: a field dropped with its parent is not
/// counted twice, and the tree is rebuilt once (linear in the fields, so an
/// object with a million keys takes no longer than reading it).
fn limit_leaves(node: &mut Node, max_leaves: usize) {
    let mut fields = Vec::new();
    let mut leaves = node.collect_fields(&mut Vec::new(), None, &mut fields);
    if leaves <= max_leaves {
        return;
    }
    let mut order: Vec<usize> = (0..fields.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&fields[a], &fields[b]);
        a.count
            .cmp(&b.count)
            .then(b.path.len().cmp(&a.path.len()))
            .then(b.path.cmp(&a.path))
    });
    let mut removed = vec![false; fields.len()];
    for i in order {
        if leaves <= max_leaves {
            break;
        }
        let mut up = Some(i);
        let mut gone = false;
        while let Some(j) = up {
            if removed[j] {
                gone = true;
                break;
            }
            up = fields[j].parent;
        }
        if gone {
            continue;
        }
        let n = fields[i].leaves;
        removed[i] = true;
        leaves -= n;
        let mut up = fields[i].parent;
        while let Some(j) = up {
            fields[j].leaves -= n;
            up = fields[j].parent;
        }
    }
    node.drop_fields(&removed, &mut 0);
}

/// Infers the `typed_value` Arrow type (the typed shape, see the module docs) for a
/// Variant column from its first `options.sample_rows` rows. `None`: shred nothing.
///
/// SQL NULLs and Variant nulls are ignored. Of the remaining values, the kind that
/// more than half of them have (objects, arrays, or one scalar kind) is shredded;
/// the other values of that place stay in `value` when written, and with no such
/// majority nothing is shredded there. Object fields shred when they appear in at
/// least `min_field_fraction` of the sampled objects at their level. Integers get
/// Int32 when every sampled value fits, else Int64 (Parquet stores narrower
/// integers as INT32 too, so narrower types would only push later values into
/// `value`); decimals (and integers
/// mixed with them) get `Decimal128(p, s)` with the largest sampled scale and `p`
/// widened to 9, 18 or 38 (the same Parquet storage, INT32/INT64/bytes, as the
/// narrowest precision); doubles Float64, floats Float32 (an integer mixed with
/// doubles is a mixed kind: it must come back as an integer); strings Utf8,
/// binaries Binary, dates Date32, timestamps `Timestamp(µs, Some("UTC"))` or
/// `Timestamp(µs, None)` (nanosecond ones likewise), times Time64(µs); nested objects
/// recurse; arrays whose non-null elements have one kind become `List`. Rows that
/// are not valid Variants are skipped here ([`super::shred()`] reports them). At most
/// `max_leaves` leaf columns are kept, dropping the rarest fields first.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::ArrayRef;
/// use arrow::datatypes::{DataType, Field, Fields};
/// use df_variant::array::VariantColumnBuilder;
/// use df_variant::shredding::{ShreddingOptions, infer_typed_value};
/// use df_variant::variant::json::JsonToVariant;
///
/// let mut b = VariantColumnBuilder::new(2);
/// let mut p = JsonToVariant::new(Default::default());
/// for doc in [r#"{"a": 1, "b": "x"}"#, r#"{"a": 300, "b": "y"}"#] {
///     p.parse(doc).unwrap();
///     b.append(p.metadata(), p.value());
/// }
/// let column: ArrayRef = b.finish();
/// let t = infer_typed_value(&column, &ShreddingOptions::default()).unwrap();
/// assert_eq!(
///     t,
///     Some(DataType::Struct(Fields::from(vec![
///         Field::new("a", DataType::Int32, true),
///         Field::new("b", DataType::Utf8, true),
///     ])))
/// );
/// ```
///
/// # Errors
/// When `column` is not a Variant column (or a shredded one cannot be reassembled).
pub fn infer_typed_value(
    column: &ArrayRef,
    options: &ShreddingOptions,
) -> Result<Option<DataType>> {
    let input = VariantInput::try_new(column).map_err(|e| shred_err!("{e}"))?;
    let mut reader = RowReader::new(&input);
    let mut stats = Stats::default();
    for i in 0..input.len().min(options.sample_rows) {
        // Malformed rows are skipped: shredding reports them.
        let Ok(Some((_, value))) = reader.row(i) else {
            continue;
        };
        stats.observe(&reader.dict, value, 0)?;
    }
    let Some(mut node) = stats.infer(options) else {
        return Ok(None);
    };
    limit_leaves(&mut node, options.max_leaves);
    if options.max_leaves == 0 {
        return Ok(None);
    }
    Ok(node.into_data_type())
}
