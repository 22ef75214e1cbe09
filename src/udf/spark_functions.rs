//! The variant and JSON functions of Spark 4.3.0, pinned, and the ones
//! df-variant leaves out. `interop/spark_functions.py` checks this list
//! against pyspark 4.3.0's `SHOW FUNCTIONS`; the tests below check it against
//! the functions we register and the README.

/// Spark 4.3.0's functions whose names hold `variant` or `json` (pyspark 4.3.0,
/// `SHOW FUNCTIONS`).
pub const SPARK_4_3_0: &[&str] = &[
    "from_json",
    "get_json_object",
    "is_valid_variant",
    "is_variant_null",
    "json_array_length",
    "json_object_keys",
    "json_tuple",
    "parse_json",
    "schema_of_json",
    "schema_of_variant",
    "schema_of_variant_agg",
    "to_json",
    "to_variant_object",
    "try_parse_json",
    "try_variant_array_append",
    "try_variant_get",
    "try_variant_insert",
    "try_variant_set",
    "variant_array_append",
    "variant_delete",
    "variant_explode",
    "variant_explode_outer",
    "variant_get",
    "variant_insert",
    "variant_set",
    "variant_strip_nulls",
];

/// The ones df-variant does not register itself, each with the README's reason.
/// (`json_tuple` comes with the Spark built-ins of `variant.spark_functions`.)
pub const LEFT_OUT: &[&str] = &[
    "get_json_object",
    "json_array_length",
    "json_object_keys",
    "json_tuple",
    "schema_of_json",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spark_function_is_ours_or_left_out_in_the_readme() {
        let ours: Vec<String> = super::super::functions()
            .iter()
            .map(|f| f.name().to_string())
            .chain(
                crate::udaf::functions()
                    .iter()
                    .map(|f| f.name().to_string()),
            )
            .chain(
                super::super::table_functions()
                    .iter()
                    .map(|f| f.name().to_string()),
            )
            .collect();
        let readme = include_str!("../../README.md");
        let section = readme
            .split("### Spark functions left out")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .expect("the README's section on Spark functions left out");
        for name in SPARK_4_3_0 {
            let registered = ours.iter().any(|o| o == name);
            let left_out = LEFT_OUT.contains(name);
            assert!(
                registered != left_out,
                "{name}: registered {registered}, left out {left_out}"
            );
            if left_out {
                assert!(
                    section.contains(&format!("`{name}`")),
                    "the README does not say why {name} is left out"
                );
            }
        }
    }
}
