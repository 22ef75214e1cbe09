//! Function registries across a rebuilt session. DataFusion rebuilds a
//! session for `SessionContext::enable_url_table` (and for any
//! `SessionStateBuilder::new_from_existing`) by registering its functions again
//! from a hash map, in no fixed order: where two functions claim one name (one's
//! name, another's alias: Spark's `array_contains` and DataFusion's `array_has`),
//! either may win, from one process to the next. [`restore_functions`] gives
//! every name back the function it had.

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::execution::{FunctionRegistry, SessionState};

/// Registers the functions of `before` on `after` again, in an order that gives
/// every name and alias of `before` its function there.
///
/// # Errors
/// When registering fails.
pub(crate) fn restore_functions(before: &SessionState, after: &mut SessionState) -> Result<()> {
    for f in registration_order(before.scalar_functions(), |f| f.name(), |f| f.aliases()) {
        after.register_udf(f)?;
    }
    for f in registration_order(before.aggregate_functions(), |f| f.name(), |f| f.aliases()) {
        after.register_udaf(f)?;
    }
    for f in registration_order(before.window_functions(), |f| f.name(), |f| f.aliases()) {
        after.register_udwf(f)?;
    }
    Ok(())
}

/// The functions of a registry (name or alias → function) in an order whose
/// registration, each under its name and aliases, gives every key the function
/// it has: a function that lost a key to another comes before that one.
fn registration_order<F>(
    registry: &std::collections::HashMap<String, Arc<F>>,
    name: impl Fn(&F) -> &str,
    aliases: impl Fn(&F) -> &[String],
) -> Vec<Arc<F>> {
    let mut functions: Vec<&Arc<F>> = Vec::new();
    for f in registry.values() {
        if !functions.iter().any(|g| Arc::ptr_eq(g, f)) {
            functions.push(f);
        }
    }
    functions.sort_by(|a, b| name(a).cmp(name(b)));
    let position = |f: &Arc<F>| functions.iter().position(|g| Arc::ptr_eq(g, f));
    let mut later: Vec<Vec<usize>> = vec![Vec::new(); functions.len()];
    let mut waiting = vec![0usize; functions.len()];
    for (i, f) in functions.iter().enumerate() {
        let keys = std::iter::once(name(f)).chain(aliases(f).iter().map(String::as_str));
        for key in keys {
            if let Some(winner) = registry.get(key)
                && !Arc::ptr_eq(winner, f)
                && let Some(j) = position(winner)
            {
                later[i].push(j);
                waiting[j] += 1;
            }
        }
    }
    // Kahn's order; a cycle (two functions each holding a key of the other),
    // which no order reproduces, ends the list as it is.
    let mut ready: std::collections::VecDeque<usize> =
        (0..functions.len()).filter(|&i| waiting[i] == 0).collect();
    let mut order = Vec::with_capacity(functions.len());
    let mut placed = vec![false; functions.len()];
    while let Some(i) = ready.pop_front() {
        order.push(i);
        placed[i] = true;
        for &j in &later[i] {
            waiting[j] -= 1;
            if waiting[j] == 0 {
                ready.push_back(j);
            }
        }
    }
    order.extend((0..functions.len()).filter(|&i| !placed[i]));
    order
        .into_iter()
        .map(|i| Arc::clone(functions[i]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_that_lost_a_name_is_registered_before_the_winner() {
        #[derive(Debug)]
        struct F(&'static str, Vec<String>);
        let a = Arc::new(F("a", vec!["x".into()]));
        let b = Arc::new(F("x", vec![]));
        let registry: std::collections::HashMap<String, Arc<F>> = [
            ("a".to_string(), Arc::clone(&a)),
            ("x".to_string(), Arc::clone(&b)),
        ]
        .into();
        let order = registration_order(&registry, |f| f.0, |f| &f.1);
        assert_eq!(order.iter().map(|f| f.0).collect::<Vec<_>>(), ["a", "x"]);
    }
}
