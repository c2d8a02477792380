//! Generated tool-call arguments from a tool's JSON Schema `inputSchema` (as published by
//! MCP `tools/list`), for *generated equivalence*: the same generated call is run through
//! several surfaces, their outcomes are compared, and a mismatch is shrunk to a minimal call.
//!
//! # Entry points
//!
//! - [`valid_arguments`]: values meant to be valid against the schema.
//! - [`invalid_arguments`]: values that are invalid, made by mutating a valid value.
//! - [`arguments`]: a mix, about 3 in 4 valid, tagged with [`Generated::valid`].
//! - [`run`]: runs a test closure over a strategy deterministically (seeded), shrinking a
//!   failure to a minimal [`Generated`] call.
//! - [`scenario_step`]: renders a call as a one-line, paste-ready scenario step.
//!
//! # Supported schema features (valid generation)
//!
//! - Boolean schemas: `true` (and a missing or empty schema) yield small arbitrary JSON
//!   (null, booleans, small integers, short strings, short arrays and objects of scalars);
//!   `false` has no valid value (a `null` is produced as a best effort).
//! - `type` as a string or an array of types (including `"null"`). Without `type`, the type
//!   is inferred from the keywords present (`properties`/`required`/… → object,
//!   `items`/`minItems`/… → array, `minLength`/`pattern`/… → string,
//!   `minimum`/`multipleOf`/… → number), else any value.
//! - `const` and `enum` (enum members that contradict a sibling `type` are skipped).
//! - `anyOf` / `oneOf`: one branch is chosen and merged with the sibling keywords.
//! - `allOf`: merged best-effort into one schema (types intersected, `properties` combined,
//!   `required` united, lower bounds maximised, upper bounds minimised, `enum` intersected,
//!   other keywords: the later one wins).
//! - `$ref`: local JSON-pointer references into the root schema are followed (`#`,
//!   `#/$defs/…`, `#/definitions/…`, any `#/…` pointer), with sibling keywords merged in;
//!   anything else (remote URLs, `$id`-relative refs, `#anchor`s, `$dynamicRef`) is treated
//!   as `true`. Recursive schemas terminate: from nesting depth 5 on, optional properties
//!   are left out and arrays get exactly `minItems` items; past depth 10, `null` is produced.
//! - `object`: `properties`; every `required` name is always present (a required name with
//!   no `properties` entry is generated from an `additionalProperties` schema, else any
//!   value); optional properties are independently present or absent (shrinking removes
//!   them); `minProperties` promotes optional properties to present, `maxProperties` drops
//!   optional ones. No undeclared keys are ever generated, whatever `additionalProperties`
//!   says. Keys come out in `properties` order.
//! - `string`: `minLength`/`maxLength` in characters (default maximum 24, never above 256
//!   unless `minLength` demands it). Characters are mostly lowercase ASCII letters, sometimes
//!   digits, `/`, `.`, `-`, space, and a few non-ASCII characters (`é`, `✓`). Shrinking
//!   shortens a string first, then moves its characters toward `a`. `pattern` and `format`
//!   are **ignored**: values may not match them.
//! - `integer`: `minimum`, `maximum`, `exclusiveMinimum`/`exclusiveMaximum` (numeric, and
//!   the draft-4 boolean form), integral `multipleOf`. Default range -1000..=1000, biased to
//!   0..=10 (3 in 4); shrinking moves toward 0 (or the bound nearest to it).
//! - `number`: the integer rules, plus quarter fractions (`0.25` steps) within the bounds;
//!   a non-integral `multipleOf` is ignored.
//! - `boolean`, `null`.
//! - `array`: `items`, `prefixItems` (and the older array form of `items` with
//!   `additionalItems`), `minItems`, `maxItems` (default 4, never above 16 unless `minItems`
//!   demands it), `uniqueItems` (duplicates are removed, which may leave fewer than
//!   `minItems`). `contains` is ignored.
//! - Ignored: `pattern`, `format`, `patternProperties`, `propertyNames`, `dependent*`,
//!   `if`/`then`/`else`, `not`, `contains`, `unevaluated*`. A `oneOf` value may match more
//!   than one branch when the branches overlap.
//!
//! # Invalid generation
//!
//! [`invalid_arguments`] mutates a valid value in a way that violates a keyword of the root
//! schema, so the result is invalid even where valid generation is only best effort:
//!
//! - drop a root `required` property;
//! - set one declared property (present or not) to a value of a type its schema cannot
//!   accept (`integer` vs `number` is respected: `0.5` is a wrong type for `integer`);
//! - add an undeclared property when `additionalProperties` is `false` (or a schema whose
//!   type the value contradicts) and there are no `patternProperties`;
//! - replace the whole arguments with a value of a type the root does not accept (for an
//!   object schema: an array, a string, a number, a boolean or `null`).
//!
//! Property mutations are used only when every valid value is an object. When no mutation
//! can violate the schema (e.g. `true`, `{}` or `{"properties":{"a":{}}}`), the fallback is
//! an array: valid for such a schema, but invalid as MCP tool arguments, which must be an
//! object.
//!
//! # Determinism
//!
//! Strategies are pure functions of the schema. [`run`] seeds proptest's ChaCha RNG from
//! [`GenConfig::seed`], so the same seed, schema and configuration produce the same sequence
//! of calls (and the same shrinking path when the test is deterministic). Proptest's
//! failure persistence is disabled: no `proptest-regressions` files are ever read or written.
//! Proptest's `PROPTEST_*` environment variables do not change the cases, seed or shrink
//! limits (those come from [`GenConfig`]).
//!
//! Size (1675 lines): argument generation for every JSON Schema keyword parity supports, with
//! mutation and shrinking; about 440 lines are unit tests.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::{any, BoxedStrategy, Just, Strategy};
use proptest::sample::select;
use proptest::strategy::Union;
use proptest::test_runner::{
    noop_result_cache, Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
};
use serde_json::{json, Map, Value};

/// Nesting depth from which optional properties are left out and arrays are kept minimal.
const SOFT_DEPTH: u32 = 5;
/// Nesting depth past which generation gives up and produces `null`.
const HARD_DEPTH: u32 = 10;
/// How many `$ref`/`allOf` hops one normalisation follows before treating the schema as
/// `true`.
const MAX_REF_HOPS: u32 = 32;
/// Default maximum string length (characters).
const DEFAULT_MAX_LENGTH: usize = 24;
/// Cap on generated string length, unless `minLength` is larger.
const CAP_LENGTH: usize = 256;
/// Default maximum array length.
const DEFAULT_MAX_ITEMS: usize = 4;
/// Cap on generated array length, unless `minItems` is larger.
const CAP_ITEMS: usize = 16;
/// Default integer range when the schema gives no bound.
const DEFAULT_INT_RANGE: (i64, i64) = (-1000, 1000);
/// Largest cross product built when merging two `anyOf`/`oneOf` lists.
const MAX_BRANCH_PRODUCT: usize = 16;

// JSON value classes, as a bit mask. `number` is `INT | FRACT`.
const T_NULL: u8 = 1;
const T_BOOL: u8 = 2;
const T_INT: u8 = 4;
const T_FRACT: u8 = 8;
const T_STRING: u8 = 16;
const T_ARRAY: u8 = 32;
const T_OBJECT: u8 = 64;
const T_ALL: u8 = 127;

/// One generated tool call's arguments, with whether they were generated to be valid.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// `true` when made by [`valid_arguments`] (valid against the schema, best effort for
    /// the ignored keywords), `false` when made by [`invalid_arguments`].
    pub valid: bool,
    /// The `arguments` value: a JSON object for valid calls of object schemas; an invalid
    /// call may be any JSON value.
    pub arguments: Value,
}

/// How [`run`] drives proptest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenConfig {
    /// Seed for the ChaCha RNG; the same seed gives the same sequence. Default 0.
    pub seed: u64,
    /// Number of passing cases required for the run to pass. Default 100.
    pub cases: u32,
    /// Limit on shrinking steps after a failure (0 disables shrinking). Default 4096.
    pub max_shrink_iters: u32,
    /// Limit on the time spent shrinking, in milliseconds (0: no limit). Default 60 000.
    pub max_shrink_ms: u32,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            seed: 0,
            cases: 100,
            max_shrink_iters: 4096,
            max_shrink_ms: 60_000,
        }
    }
}

/// What [`run`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct GenReport {
    /// Generated cases passed to the test before the run ended, including the first failing
    /// one; shrinking steps are not counted. Equals [`GenConfig::cases`] when all pass.
    pub cases_run: u32,
    /// The failure, shrunk, if a case failed.
    pub failure: Option<GenFailure>,
    /// Why proptest gave up without a verdict (for example, a caller-supplied strategy that
    /// rejects too many values); `None` normally. Strategies from this module never reject.
    pub aborted: Option<String>,
}

/// A failing case, shrunk to a minimal one.
#[derive(Debug, Clone, PartialEq)]
pub struct GenFailure {
    /// The simplest failing call found by shrinking (the original if it could not shrink).
    pub minimal: Generated,
    /// The test's error message for `minimal` (for a panic: `test panicked: …`).
    pub message: String,
    /// The first failing call, before shrinking.
    pub original: Option<Generated>,
}

/// A strategy for arguments valid against `schema` (a JSON Schema, usually a tool's
/// `inputSchema`; `$ref`s resolve against `schema` itself).
///
/// See the module docs for the supported keywords; `pattern` and `format` are ignored, so a
/// value may break them. Never panics: malformed keywords are ignored and unsatisfiable
/// schemas yield a best-effort value.
pub fn valid_arguments(schema: &Value) -> BoxedStrategy<Value> {
    Ctx { root: schema }.valid(schema, 0)
}

/// A strategy for arguments invalid against `schema`, each made by mutating a valid value:
/// dropping a required property, giving one declared property a value of a wrong type,
/// adding an undeclared property (where forbidden), or replacing the whole arguments with a
/// value of a type the schema rejects.
///
/// Only mutations that violate the root schema are used. When none exists (the schema
/// accepts everything), the values are arrays — invalid as MCP tool arguments, though not
/// against the schema.
pub fn invalid_arguments(schema: &Value) -> BoxedStrategy<Value> {
    let ctx = Ctx { root: schema };
    let normal = ctx.normalize(schema, 0);
    let root_mask = ctx.accepted(&normal, 0);
    let mut options: Vec<(u32, BoxedStrategy<Value>)> = Vec::new();
    if let Value::Object(map) = &normal {
        if ctx.generates_only_objects(map, root_mask) {
            property_mutations(&ctx, schema, map, &mut options);
        }
    }
    if root_mask != T_ALL {
        options.push((1, wrong_value(root_mask)));
    }
    if options.is_empty() {
        options.push((1, vec(scalar(), 0..=2).prop_map(Value::Array).boxed()));
    }
    Union::new_weighted(options).boxed()
}

/// The most a schema may demand of one generated value before generation is refused: about
/// this many characters and items in total (a peer-supplied `inputSchema` with `minItems` and
/// `minLength` in the thousands, nested, would otherwise exhaust memory).
pub const SIZE_BUDGET: u64 = 1_000_000;

/// Checks that the smallest value `schema` demands fits [`SIZE_BUDGET`]: strings count their
/// `minLength`, arrays `minItems` times their items' size, objects the sum of their required
/// properties, `anyOf`/`oneOf` their smallest branch; local `$ref`s are followed up to the
/// generator's depth.
///
/// Errors: the estimate exceeds the budget; the text names the estimate and the budget.
pub fn check_size(schema: &Value) -> Result<(), String> {
    let need = min_size(schema, schema, 0);
    if need > SIZE_BUDGET {
        return Err(format!(
            "the inputSchema demands values of at least about {need} characters and items, more than parity generates ({SIZE_BUDGET})"
        ));
    }
    Ok(())
}

fn min_size(root: &Value, schema: &Value, depth: u32) -> u64 {
    let Some(map) = schema.as_object() else {
        return 1;
    };
    if depth > HARD_DEPTH {
        return 1;
    }
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| root.pointer(p))
    {
        return min_size(root, target, depth + 1);
    }
    let branches: Vec<&Value> = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_array))
        .flatten()
        .collect();
    if !branches.is_empty() {
        return branches
            .iter()
            .map(|b| min_size(root, b, depth + 1))
            .min()
            .unwrap_or(1);
    }
    let len = usize_keyword(map, "minLength")
        .map_or(1, |n| n as u64)
        .max(1);
    let items = usize_keyword(map, "minItems").map_or(0, |n| n as u64);
    let item_size = map.get("items").map_or(1, |i| min_size(root, i, depth + 1));
    let required: u64 = map
        .get("required")
        .and_then(Value::as_array)
        .map(|req| {
            req.iter()
                .filter_map(Value::as_str)
                .map(|name| {
                    map.get("properties")
                        .and_then(|p| p.get(name))
                        .map_or(1, |p| min_size(root, p, depth + 1))
                })
                .fold(0u64, u64::saturating_add)
        })
        .unwrap_or(0);
    len.saturating_add(items.saturating_mul(item_size))
        .saturating_add(required)
}

/// A strategy mixing [`valid_arguments`] (about 3 in 4) and [`invalid_arguments`], tagged.
///
/// Shrinking may move a failing invalid call to a valid one when that also fails.
pub fn arguments(schema: &Value) -> BoxedStrategy<Generated> {
    let valid = valid_arguments(schema)
        .prop_map(|arguments| Generated {
            valid: true,
            arguments,
        })
        .boxed();
    let invalid = invalid_arguments(schema)
        .prop_map(|arguments| Generated {
            valid: false,
            arguments,
        })
        .boxed();
    Union::new_weighted(vec![(3, valid), (1, invalid)]).boxed()
}

/// Runs `test` on calls from `strategy` until [`GenConfig::cases`] pass or one fails, then
/// shrinks the failure (up to [`GenConfig::max_shrink_iters`] steps).
///
/// Deterministic: proptest's `TestRunner` runs on a ChaCha RNG seeded from
/// [`GenConfig::seed`], with failure persistence off (no regression files are read or
/// written) and no result cache. `test` runs synchronously on the calling thread, once per
/// case and once per shrinking step, and may block (e.g. on a runtime `Handle::block_on`
/// from a blocking thread). It reports a failure by returning `Err(message)`; a panic is
/// caught and reported as a failure with message `test panicked: …`, but returning `Err` is
/// preferred. A non-deterministic test may shrink to a call that does not reproduce.
pub fn run<F>(config: &GenConfig, strategy: BoxedStrategy<Generated>, test: F) -> GenReport
where
    F: Fn(&Generated) -> Result<(), String>,
{
    let runner_config = Config {
        cases: config.cases,
        max_shrink_iters: config.max_shrink_iters,
        max_shrink_time: config.max_shrink_ms,
        failure_persistence: None,
        source_file: None,
        result_cache: noop_result_cache,
        verbose: 0,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(config.seed));
    let mut runner = TestRunner::new_with_rng(runner_config, rng);
    let cases_run = Cell::new(0u32);
    let original: RefCell<Option<Generated>> = RefCell::new(None);
    let result = runner.run(&strategy, |generated: Generated| {
        let shrinking = original.borrow().is_some();
        if !shrinking {
            cases_run.set(cases_run.get().saturating_add(1));
        }
        let outcome = match catch_unwind(AssertUnwindSafe(|| test(&generated))) {
            Ok(outcome) => outcome,
            Err(payload) => Err(format!("test panicked: {}", panic_message(&*payload))),
        };
        if outcome.is_err() && !shrinking {
            *original.borrow_mut() = Some(generated.clone());
        }
        outcome.map_err(TestCaseError::fail)
    });
    let cases_run = cases_run.get();
    match result {
        Ok(()) => GenReport {
            cases_run,
            failure: None,
            aborted: None,
        },
        Err(TestError::Fail(reason, minimal)) => GenReport {
            cases_run,
            failure: Some(GenFailure {
                minimal,
                message: reason.message().to_owned(),
                original: original.into_inner(),
            }),
            aborted: None,
        },
        Err(TestError::Abort(reason)) => GenReport {
            cases_run,
            failure: None,
            aborted: Some(reason.message().to_owned()),
        },
    }
}

/// A one-line, paste-ready scenario step calling `tool` with the generated arguments:
/// `- call: {"name":"read_file","arguments":{"path":"aaaaaaaaaaa"}}`.
///
/// The mapping is compact JSON, which is valid YAML flow style. Whether the call was valid
/// is not recorded. A non-object `arguments` (from invalid generation) is written as is,
/// although the scenario loader only accepts an object there.
pub fn scenario_step(tool: &str, generated: &Generated) -> String {
    let call = json!({"name": tool, "arguments": generated.arguments});
    format!("- call: {call}")
}

/// 32 seed bytes from a `u64`, by SplitMix64.
/// `n` argument values valid against `schema` ([`valid_arguments`]), drawn deterministically
/// from `seed` (the same schema and seed give the same values): the MCP profile's tool-result
/// checks call a declared-safe tool with them and print the seed. Empty when the schema is over
/// [`SIZE_BUDGET`] ([`check_size`]) or no value could be drawn.
pub fn sample_valid(schema: &Value, seed: u64, n: usize) -> Vec<Value> {
    use proptest::strategy::ValueTree;
    if check_size(schema).is_err() {
        return Vec::new();
    }
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(seed));
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = valid_arguments(schema);
    (0..n)
        .filter_map(|_| strategy.new_tree(&mut runner).ok().map(|t| t.current()))
        .collect()
}

fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut state = seed;
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_mut(8) {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes());
    }
    bytes
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_owned()
    }
}

// ---- invalid mutations ----

/// Pushes the property-level mutations of an object-only root schema `map`.
fn property_mutations(
    ctx: &Ctx<'_>,
    schema: &Value,
    map: &Map<String, Value>,
    options: &mut Vec<(u32, BoxedStrategy<Value>)>,
) {
    let valid = ctx.valid(schema, 0);
    let required = required_names(map);
    if !required.is_empty() {
        let drop = (valid.clone(), select(required))
            .prop_map(|(mut value, name)| {
                if let Value::Object(object) = &mut value {
                    object.shift_remove(&name);
                }
                value
            })
            .boxed();
        options.push((2, drop));
    }
    let empty = Map::new();
    let properties = map
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut wrong: Vec<BoxedStrategy<(String, Value)>> = Vec::new();
    for (name, sub) in properties {
        let mask = ctx.accepted(sub, 0);
        if mask != T_ALL {
            let name = name.clone();
            wrong.push(
                wrong_value(mask)
                    .prop_map(move |v| (name.clone(), v))
                    .boxed(),
            );
        }
    }
    if !wrong.is_empty() {
        options.push((2, set_property(valid.clone(), Union::new(wrong).boxed())));
    }
    if !map.contains_key("patternProperties") {
        let extra_mask = match map.get("additionalProperties") {
            None => T_ALL,
            Some(extra) => ctx.accepted(extra, 0),
        };
        if extra_mask != T_ALL {
            let mut name = "unexpected".to_owned();
            while properties.contains_key(&name) {
                name.push('_');
            }
            let extra = wrong_value(extra_mask)
                .prop_map(move |v| (name.clone(), v))
                .boxed();
            options.push((1, set_property(valid, extra)));
        }
    }
}

/// Sets one property of each valid object to a generated `(name, value)`.
fn set_property(
    valid: BoxedStrategy<Value>,
    entry: BoxedStrategy<(String, Value)>,
) -> BoxedStrategy<Value> {
    (valid, entry)
        .prop_map(|(mut value, (name, wrong))| {
            if let Value::Object(object) = &mut value {
                object.insert(name, wrong);
            }
            value
        })
        .boxed()
}

/// Values whose type class is outside `accepted` (which must not be [`T_ALL`]).
fn wrong_value(accepted: u8) -> BoxedStrategy<Value> {
    let mut options: Vec<BoxedStrategy<Value>> = Vec::new();
    if accepted & T_NULL == 0 {
        options.push(Just(Value::Null).boxed());
    }
    if accepted & T_BOOL == 0 {
        options.push(any::<bool>().prop_map(Value::Bool).boxed());
    }
    if accepted & T_INT == 0 {
        options.push((0i64..=100).prop_map(Value::from).boxed());
    }
    if accepted & T_FRACT == 0 {
        options.push((0i64..=100).prop_map(|n| json!(n as f64 + 0.5)).boxed());
    }
    if accepted & T_STRING == 0 {
        options.push(string_strategy(0, 8).prop_map(Value::String).boxed());
    }
    if accepted & T_ARRAY == 0 {
        options.push(vec(scalar(), 0..=2).prop_map(Value::Array).boxed());
    }
    if accepted & T_OBJECT == 0 {
        options.push(Just(json!({})).boxed());
    }
    if options.is_empty() {
        // Unreachable for callers, which check `accepted != T_ALL`.
        return Just(Value::Null).boxed();
    }
    Union::new(options).boxed()
}

// ---- schema context ----

/// The root schema, for `$ref` resolution.
struct Ctx<'a> {
    root: &'a Value,
}

/// A generated JSON type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

impl Ctx<'_> {
    /// `schema` with top-level `$ref` and `allOf` merged in: a boolean or an object with
    /// neither keyword at its top level.
    fn normalize(&self, schema: &Value, hops: u32) -> Value {
        let own = match schema {
            Value::Object(own) => own,
            Value::Bool(b) => return Value::Bool(*b),
            _ => return Value::Bool(true),
        };
        if hops > MAX_REF_HOPS {
            return Value::Bool(true);
        }
        let mut own = own.clone();
        let reference = own.shift_remove("$ref");
        let all_of = own.shift_remove("allOf");
        let mut out = Value::Object(own);
        if let Some(Value::String(reference)) = reference {
            let target = match self.lookup(&reference) {
                Some(target) => self.normalize(target, hops + 1),
                None => Value::Bool(true),
            };
            out = merge(target, out);
        }
        if let Some(Value::Array(subs)) = all_of {
            for sub in &subs {
                out = merge(out, self.normalize(sub, hops + 1));
            }
        }
        out
    }

    /// The schema a local reference points to.
    fn lookup(&self, reference: &str) -> Option<&Value> {
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() {
            return Some(self.root);
        }
        if !pointer.starts_with('/') {
            return None;
        }
        self.root.pointer(&percent_decode(pointer))
    }

    /// A superset of the type classes `schema` accepts (values of other classes are
    /// certainly invalid).
    fn accepted(&self, schema: &Value, hops: u32) -> u8 {
        if hops > MAX_REF_HOPS {
            return T_ALL;
        }
        let map = match self.normalize(schema, 0) {
            Value::Bool(false) => return 0,
            Value::Object(map) => map,
            _ => return T_ALL,
        };
        let mut mask = T_ALL;
        if let Some(types) = map.get("type") {
            mask &= type_mask(types);
        }
        if let Some(value) = map.get("const") {
            mask &= value_mask(value);
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            mask &= values.iter().fold(0, |acc, v| acc | value_mask(v));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                mask &= branches
                    .iter()
                    .fold(0, |acc, b| acc | self.accepted(b, hops + 1));
            }
        }
        mask
    }

    /// Whether every value [`Ctx::valid`] makes for the normalised root `map` is an object.
    fn generates_only_objects(&self, map: &Map<String, Value>, mask: u8) -> bool {
        if mask == T_OBJECT {
            return true;
        }
        let plain = ["const", "enum", "anyOf", "oneOf"]
            .iter()
            .all(|key| !map.contains_key(*key));
        plain && kinds_of(map).is_some_and(|kinds| kinds == [Kind::Object])
    }

    /// Values valid against `schema` (best effort), at nesting `depth`.
    fn valid(&self, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
        if depth > HARD_DEPTH {
            return Just(Value::Null).boxed();
        }
        let map = match self.normalize(schema, 0) {
            Value::Bool(true) => return any_json(),
            Value::Object(map) => map,
            _ => return Just(Value::Null).boxed(),
        };
        if let Some(value) = map.get("const") {
            return Just(value.clone()).boxed();
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            let mask = map.get("type").map_or(T_ALL, type_mask);
            let fitting: Vec<Value> = values
                .iter()
                .filter(|v| value_mask(v) & mask != 0)
                .cloned()
                .collect();
            let options = if fitting.is_empty() {
                values.clone()
            } else {
                fitting
            };
            if options.is_empty() {
                return Just(Value::Null).boxed();
            }
            return select(options).boxed();
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                if branches.is_empty() {
                    continue;
                }
                let mut rest = map.clone();
                rest.shift_remove(key);
                let rest = Value::Object(rest);
                let options: Vec<BoxedStrategy<Value>> = branches
                    .iter()
                    .map(|branch| {
                        let merged = merge(rest.clone(), self.normalize(branch, 0));
                        self.valid(&merged, depth + 1)
                    })
                    .collect();
                return Union::new(options).boxed();
            }
        }
        let Some(kinds) = kinds_of(&map) else {
            return any_json();
        };
        let mut options: Vec<(u32, BoxedStrategy<Value>)> = Vec::new();
        for kind in kinds {
            let strategy = match kind {
                Kind::Null => Just(Value::Null).boxed(),
                Kind::Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
                Kind::Integer => integer(&map),
                Kind::Number => number(&map),
                Kind::String => {
                    let (min, max) = string_bounds(&map);
                    string_strategy(min, max).prop_map(Value::String).boxed()
                }
                Kind::Array => self.array(&map, depth),
                Kind::Object => self.object(&map, depth),
            };
            options.push((if kind == Kind::Null { 1 } else { 3 }, strategy));
        }
        match options.len() {
            0 => Just(Value::Null).boxed(),
            1 => options.swap_remove(0).1,
            _ => Union::new_weighted(options).boxed(),
        }
    }

    fn object(&self, map: &Map<String, Value>, depth: u32) -> BoxedStrategy<Value> {
        let empty = Map::new();
        let properties = map
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut required = required_names(map);
        if let Some(min) = usize_keyword(map, "minProperties") {
            for (name, sub) in properties {
                if required.len() >= min {
                    break;
                }
                if !required.contains(name) && *sub != Value::Bool(false) {
                    required.push(name.clone());
                }
            }
        }
        let soft = depth >= SOFT_DEPTH;
        type Entry = Option<(bool, String, Value)>;
        let mut entries: Vec<BoxedStrategy<Entry>> = Vec::new();
        for (name, sub) in properties {
            let key = name.clone();
            if required.contains(name) {
                entries.push(
                    self.valid(sub, depth + 1)
                        .prop_map(move |v| Some((true, key.clone(), v)))
                        .boxed(),
                );
            } else if !soft && *sub != Value::Bool(false) {
                entries.push(
                    option::of(self.valid(sub, depth + 1))
                        .prop_map(move |v| v.map(|v| (false, key.clone(), v)))
                        .boxed(),
                );
            }
        }
        let extra = match map.get("additionalProperties") {
            Some(extra @ Value::Object(_)) => extra.clone(),
            _ => Value::Bool(true),
        };
        for name in &required {
            if !properties.contains_key(name) {
                let key = name.clone();
                entries.push(
                    self.valid(&extra, depth + 1)
                        .prop_map(move |v| Some((true, key.clone(), v)))
                        .boxed(),
                );
            }
        }
        let max = usize_keyword(map, "maxProperties");
        let required_count = required.len();
        entries
            .prop_map(move |items| {
                let mut out = Map::new();
                let mut count = required_count;
                for (is_required, key, value) in items.into_iter().flatten() {
                    if !is_required {
                        if max.is_some_and(|max| count >= max) {
                            continue;
                        }
                        count += 1;
                    }
                    out.insert(key, value);
                }
                Value::Object(out)
            })
            .boxed()
    }

    fn array(&self, map: &Map<String, Value>, depth: u32) -> BoxedStrategy<Value> {
        let (prefix, rest) = match (map.get("prefixItems"), map.get("items")) {
            (Some(Value::Array(prefix)), items) => {
                (prefix.clone(), items.cloned().unwrap_or(Value::Bool(true)))
            }
            (_, Some(Value::Array(prefix))) => (
                prefix.clone(),
                map.get("additionalItems")
                    .cloned()
                    .unwrap_or(Value::Bool(true)),
            ),
            (_, items) => (Vec::new(), items.cloned().unwrap_or(Value::Bool(true))),
        };
        let min = usize_keyword(map, "minItems").unwrap_or(0);
        let max = usize_keyword(map, "maxItems")
            .unwrap_or(min.max(DEFAULT_MAX_ITEMS))
            .min(min.max(CAP_ITEMS))
            .max(min);
        let fixed = prefix.len().min(max);
        let heads: Vec<BoxedStrategy<Value>> = prefix
            .iter()
            .take(fixed)
            .map(|item| self.valid(item, depth + 1))
            .collect();
        let rest_min = min.saturating_sub(fixed);
        let rest_max = if rest == Value::Bool(false) || depth >= SOFT_DEPTH {
            rest_min
        } else {
            (max - fixed).max(rest_min)
        };
        let tail = vec(self.valid(&rest, depth + 1), rest_min..=rest_max);
        let unique = map.get("uniqueItems") == Some(&Value::Bool(true));
        (heads, tail)
            .prop_map(move |(mut items, tail)| {
                items.extend(tail);
                if unique {
                    let mut seen: Vec<Value> = Vec::with_capacity(items.len());
                    for item in items {
                        if !seen.contains(&item) {
                            seen.push(item);
                        }
                    }
                    items = seen;
                }
                Value::Array(items)
            })
            .boxed()
    }
}

// ---- schema helpers ----

/// Merges two normalised schemas into one that approximates `allOf: [a, b]`.
fn merge(a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Bool(false), _) | (_, Value::Bool(false)) => Value::Bool(false),
        (Value::Bool(true), other) | (other, Value::Bool(true)) => other,
        (Value::Object(mut a), Value::Object(b)) => {
            for (key, new) in b {
                let merged = match a.get(&key) {
                    None => new,
                    Some(old) => merge_keyword(&key, old, new),
                };
                a.insert(key, merged);
            }
            Value::Object(a)
        }
        (_, other) => other,
    }
}

fn merge_keyword(key: &str, old: &Value, new: Value) -> Value {
    match key {
        "type" => {
            let mask = type_mask(old) & type_mask(&new);
            let mut names: Vec<Value> = Vec::new();
            for name in type_names(old).into_iter().chain(type_names(&new)) {
                let name = if name == "number" && mask & T_FRACT == 0 {
                    "integer"
                } else {
                    name
                };
                let bits = type_mask(&Value::from(name));
                if bits & mask == bits && !names.iter().any(|n| n == name) {
                    names.push(Value::from(name));
                }
            }
            Value::Array(names)
        }
        "properties" => match (old, new) {
            (Value::Object(old), Value::Object(new)) => {
                let mut out = old.clone();
                for (name, schema) in new {
                    let combined = match out.get(&name) {
                        Some(prev) => json!({"allOf": [prev, schema]}),
                        None => schema,
                    };
                    out.insert(name, combined);
                }
                Value::Object(out)
            }
            (_, new) => new,
        },
        "required" => match (old, new) {
            (Value::Array(old), Value::Array(new)) => {
                let mut out = old.clone();
                for name in new {
                    if !out.contains(&name) {
                        out.push(name);
                    }
                }
                Value::Array(out)
            }
            (_, new) => new,
        },
        "enum" => match (old, &new) {
            (Value::Array(old), Value::Array(new_values)) => Value::Array(
                old.iter()
                    .filter(|v| new_values.contains(v))
                    .cloned()
                    .collect(),
            ),
            _ => new,
        },
        "anyOf" | "oneOf" => match (old, &new) {
            (Value::Array(old), Value::Array(new_branches))
                if old.len() * new_branches.len() <= MAX_BRANCH_PRODUCT =>
            {
                let mut product = Vec::new();
                for x in old {
                    for y in new_branches {
                        product.push(json!({"allOf": [x, y]}));
                    }
                }
                Value::Array(product)
            }
            _ => new,
        },
        "minimum" | "minLength" | "minItems" | "minProperties" | "exclusiveMinimum" => {
            pick_number(old, new, true)
        }
        "maximum" | "maxLength" | "maxItems" | "maxProperties" | "exclusiveMaximum" => {
            pick_number(old, new, false)
        }
        "additionalProperties" if *old == Value::Bool(false) => Value::Bool(false),
        "uniqueItems" if *old == Value::Bool(true) => Value::Bool(true),
        _ => new,
    }
}

/// The larger (`larger`) or smaller of two numeric keyword values; `new` if either is not a
/// number.
fn pick_number(old: &Value, new: Value, larger: bool) -> Value {
    match (old.as_f64(), new.as_f64()) {
        (Some(o), Some(n)) if (o > n) == larger && o != n => old.clone(),
        _ => new,
    }
}

fn percent_decode(pointer: &str) -> String {
    let bytes = pointer.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(byte) = hex {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn type_names(types: &Value) -> Vec<&str> {
    match types {
        Value::String(name) => vec![name.as_str()],
        Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn name_mask(name: &str) -> u8 {
    match name {
        "null" => T_NULL,
        "boolean" => T_BOOL,
        "integer" => T_INT,
        "number" => T_INT | T_FRACT,
        "string" => T_STRING,
        "array" => T_ARRAY,
        "object" => T_OBJECT,
        _ => 0,
    }
}

/// The type classes a `type` keyword allows ([`T_ALL`] when malformed).
fn type_mask(types: &Value) -> u8 {
    match types {
        Value::String(name) => name_mask(name),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .fold(0, |acc, name| acc | name_mask(name)),
        _ => T_ALL,
    }
}

/// The type class of one value (integral numbers, including `1.0`, are `integer`).
fn value_mask(value: &Value) -> u8 {
    match value {
        Value::Null => T_NULL,
        Value::Bool(_) => T_BOOL,
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                T_INT
            } else {
                T_FRACT
            }
        }
        Value::String(_) => T_STRING,
        Value::Array(_) => T_ARRAY,
        Value::Object(_) => T_OBJECT,
    }
}

/// The types to generate for `map`: from `type`, else inferred from its keywords; `None`
/// for any value.
fn kinds_of(map: &Map<String, Value>) -> Option<Vec<Kind>> {
    fn kind(name: &str) -> Option<Kind> {
        Some(match name {
            "null" => Kind::Null,
            "boolean" => Kind::Boolean,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "string" => Kind::String,
            "array" => Kind::Array,
            "object" => Kind::Object,
            _ => return None,
        })
    }
    if let Some(types) = map.get("type") {
        if !matches!(types, Value::String(_) | Value::Array(_)) {
            return None;
        }
        let mut kinds: Vec<Kind> = Vec::new();
        for k in type_names(types).into_iter().filter_map(kind) {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        return Some(kinds);
    }
    let has = |keys: &[&str]| keys.iter().any(|k| map.contains_key(*k));
    if has(&[
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "dependentRequired",
    ]) {
        Some(vec![Kind::Object])
    } else if has(&[
        "items",
        "prefixItems",
        "additionalItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
    ]) {
        Some(vec![Kind::Array])
    } else if has(&["minLength", "maxLength", "pattern", "format"]) {
        Some(vec![Kind::String])
    } else if has(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        Some(vec![Kind::Number])
    } else {
        None
    }
}

fn required_names(map: &Map<String, Value>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    if let Some(Value::Array(required)) = map.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// A non-negative integral keyword value (saturating to `usize`).
fn usize_keyword(map: &Map<String, Value>, key: &str) -> Option<usize> {
    let value = map.get(key)?;
    if let Some(n) = value.as_u64() {
        return Some(usize::try_from(n).unwrap_or(usize::MAX));
    }
    let f = value.as_f64()?;
    (f >= 0.0 && f.fract() == 0.0).then_some(f as usize)
}

fn string_bounds(map: &Map<String, Value>) -> (usize, usize) {
    let min = usize_keyword(map, "minLength").unwrap_or(0);
    let max = usize_keyword(map, "maxLength")
        .unwrap_or(min.max(DEFAULT_MAX_LENGTH))
        .min(min.max(CAP_LENGTH))
        .max(min);
    (min, max)
}

/// Integer bounds `(lo, hi)` from the numeric keywords, with the defaults applied. `lo > hi`
/// means unsatisfiable.
fn int_bounds(map: &Map<String, Value>) -> (i64, i64) {
    let (lo, hi) = scaled_bounds(map, 1.0);
    let (default_lo, default_hi) = DEFAULT_INT_RANGE;
    match (lo, hi) {
        (Some(lo), Some(hi)) => (lo, hi),
        (Some(lo), None) => (lo, default_hi.max(lo.saturating_add(100))),
        (None, Some(hi)) => (default_lo.min(hi.saturating_sub(100)), hi),
        (None, None) => (default_lo, default_hi),
    }
}

/// The integer bounds of `value * scale` implied by `minimum`/`maximum`/`exclusive*`.
fn scaled_bounds(map: &Map<String, Value>, scale: f64) -> (Option<i64>, Option<i64>) {
    let number = |key: &str| map.get(key).and_then(Value::as_f64);
    let draft4_exclusive = |key: &str| map.get(key) == Some(&Value::Bool(true));
    let mut lo: Option<f64> = number("minimum").map(|m| {
        if draft4_exclusive("exclusiveMinimum") {
            (m * scale).floor() + 1.0
        } else {
            (m * scale).ceil()
        }
    });
    if let Some(e) = number("exclusiveMinimum") {
        let bound = (e * scale).floor() + 1.0;
        lo = Some(lo.map_or(bound, |l| l.max(bound)));
    }
    let mut hi: Option<f64> = number("maximum").map(|m| {
        if draft4_exclusive("exclusiveMaximum") {
            (m * scale).ceil() - 1.0
        } else {
            (m * scale).floor()
        }
    });
    if let Some(e) = number("exclusiveMaximum") {
        let bound = (e * scale).ceil() - 1.0;
        hi = Some(hi.map_or(bound, |h| h.min(bound)));
    }
    // `as` saturates at the i64 range.
    (lo.map(|l| l as i64), hi.map(|h| h as i64))
}

/// A positive integral `multipleOf`, if any.
fn integral_step(map: &Map<String, Value>) -> Option<i64> {
    let m = map.get("multipleOf")?.as_f64()?;
    (m >= 1.0 && m.fract() == 0.0 && m < 1e15).then_some(m as i64)
}

fn integer(map: &Map<String, Value>) -> BoxedStrategy<Value> {
    let (lo, hi) = int_bounds(map);
    int_strategy(lo, hi, integral_step(map).unwrap_or(1))
        .prop_map(Value::from)
        .boxed()
}

fn number(map: &Map<String, Value>) -> BoxedStrategy<Value> {
    let (lo, hi) = int_bounds(map);
    let step = integral_step(map);
    let whole = int_strategy(lo, hi, step.unwrap_or(1)).prop_map(Value::from);
    if step.is_some() || map.contains_key("multipleOf") {
        return whole.boxed();
    }
    let (lo4, hi4) = scaled_bounds(map, 4.0);
    let lo4 = lo4.unwrap_or(lo.saturating_mul(4));
    let hi4 = hi4.unwrap_or(hi.saturating_mul(4));
    if lo4 > hi4 {
        return whole.boxed();
    }
    let quarters = (lo4..=hi4).prop_map(|n| json!(n as f64 / 4.0)).boxed();
    if lo > hi {
        return quarters;
    }
    Union::new_weighted(vec![(3, whole.boxed()), (1, quarters)]).boxed()
}

/// Multiples of `step` in `lo..=hi`, 3 in 4 from the small non-negative ones (at most
/// `10 * step`).
fn int_strategy(lo: i64, hi: i64, step: i64) -> BoxedStrategy<i64> {
    let step = step.max(1);
    let clamp = |k: i128| k.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    let (lo_w, hi_w, step_w) = (i128::from(lo), i128::from(hi), i128::from(step));
    let k_lo = clamp(-((-lo_w).div_euclid(step_w)));
    let k_hi = clamp(hi_w.div_euclid(step_w));
    if k_lo > k_hi {
        return Just(lo).boxed();
    }
    let scale = move |k: i64| k.saturating_mul(step);
    let full = (k_lo..=k_hi).prop_map(scale).boxed();
    let (small_lo, small_hi) = (k_lo.max(0), k_hi.min(10));
    if small_lo > small_hi || (small_lo == k_lo && small_hi == k_hi) {
        return full;
    }
    let small = (small_lo..=small_hi).prop_map(scale).boxed();
    Union::new_weighted(vec![(3, small), (1, full)]).boxed()
}

// ---- value strategies ----

/// Characters: mostly lowercase ASCII (shrinking toward `a`), sometimes digits, `/`, `.`,
/// `-`, space, and a few non-ASCII characters.
fn char_strategy() -> BoxedStrategy<char> {
    Union::new_weighted(vec![
        (16, proptest::char::range('a', 'z').boxed()),
        (2, proptest::char::range('0', '9').boxed()),
        (2, select(vec!['/', '.', '-', ' ']).boxed()),
        (1, select(vec!['é', '✓']).boxed()),
    ])
    .boxed()
}

/// Strings of `min..=max` characters from [`char_strategy`].
fn string_strategy(min: usize, max: usize) -> BoxedStrategy<String> {
    vec(char_strategy(), min..=max.max(min))
        .prop_map(|chars| chars.into_iter().collect())
        .boxed()
}

/// A small scalar: null, boolean, small integer or short string.
fn scalar() -> BoxedStrategy<Value> {
    Union::new(vec![
        Just(Value::Null).boxed(),
        any::<bool>().prop_map(Value::Bool).boxed(),
        (-10i64..=100).prop_map(Value::from).boxed(),
        string_strategy(0, 8).prop_map(Value::String).boxed(),
    ])
    .boxed()
}

/// Small arbitrary JSON: a scalar, or an array or object of up to 3 scalars.
fn any_json() -> BoxedStrategy<Value> {
    Union::new_weighted(vec![
        (4, scalar()),
        (1, vec(scalar(), 0..=3).prop_map(Value::Array).boxed()),
        (
            1,
            vec((string_strategy(1, 6), scalar()), 0..=3)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect()))
                .boxed(),
        ),
    ])
    .boxed()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod size_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn huge_minimums_are_refused_and_ordinary_schemas_pass() {
        let huge = json!({"type": "object", "required": ["a"], "properties": {"a": {
            "type": "array", "minItems": 3000, "items": {"type": "array", "minItems": 3000,
            "items": {"type": "string", "minLength": 20}}}}});
        let e = check_size(&huge).unwrap_err();
        assert!(e.contains("more than parity generates"), "{e}");
        let ok = json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string", "minLength": 1}}});
        assert_eq!(check_size(&ok), Ok(()));
        let via_ref = json!({"$defs": {"big": {"type": "string", "minLength": 2000000}}, "$ref": "#/$defs/big"});
        assert!(check_size(&via_ref).is_err());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use parity_reference::dispatcher::{Dispatcher, DispatcherConfig};
    use proptest::strategy::ValueTree;

    /// `(name, inputSchema)` of the six reference tools, as `tools/list` publishes them.
    fn reference_schemas() -> Vec<(String, Value)> {
        let dispatcher = Dispatcher::new(DispatcherConfig::new("/nonexistent-parity-root"));
        dispatcher
            .tools()
            .into_iter()
            .map(|tool| (tool.name, tool.input_schema))
            .collect()
    }

    fn mixed_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "mode": {"enum": ["fast", "slow", 3]},
                "level": {"type": "string", "enum": ["low", 1, "high"]},
                "count": {"type": "integer", "minimum": -5, "exclusiveMaximum": 7},
                "big": {"type": "integer", "minimum": 5000},
                "negative": {"type": "integer", "maximum": -20},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1.5},
                "step": {"type": "integer", "multipleOf": 5, "minimum": 12, "maximum": 40},
                "tags": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 3},
                    "minItems": 1,
                    "maxItems": 3
                },
                "set": {"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": true},
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}, {"type": "boolean"}],
                    "items": false
                },
                "target": {"anyOf": [
                    {"type": "string", "maxLength": 5},
                    {"type": "integer", "minimum": 100}
                ]},
                "choice": {"oneOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "properties": {"x": {"const": 1}},
                        "required": ["x"],
                        "additionalProperties": false
                    }
                ]},
                "note": {"type": ["string", "null"]},
                "flag": {"type": "boolean"},
                "node": {"$ref": "#/$defs/node"},
                "both": {"allOf": [{"type": "string"}, {"minLength": 2}]},
                "anything": {},
                "inferred": {"minLength": 3, "maxLength": 4},
                "meta": {
                    "type": "object",
                    "additionalProperties": {"type": "integer"},
                    "required": ["id"],
                    "minProperties": 2,
                    "properties": {"a": {"type": "boolean"}, "b": {"type": "boolean"}}
                }
            },
            "required": ["mode", "count", "tags", "node", "meta"],
            "additionalProperties": false,
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "children": {
                            "type": "array",
                            "items": {"$ref": "#/$defs/node"},
                            "maxItems": 2
                        }
                    },
                    "required": ["name"]
                }
            }
        })
    }

    /// A root `anyOf` of required alternatives.
    fn either_schema() -> Value {
        json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
            "additionalProperties": false
        })
    }

    /// No `type`, nothing required, an allOf at the root.
    fn untyped_schema() -> Value {
        json!({
            "allOf": [
                {"properties": {"n": {"type": "number"}}},
                {"properties": {"n": {"minimum": 1}, "s": {"type": "string"}}, "required": ["s"]}
            ]
        })
    }

    fn all_schemas() -> Vec<(String, Value)> {
        let mut schemas = reference_schemas();
        schemas.push(("mixed".to_owned(), mixed_schema()));
        schemas.push(("either".to_owned(), either_schema()));
        schemas.push(("untyped".to_owned(), untyped_schema()));
        schemas
    }

    fn runner(seed: u64) -> TestRunner {
        TestRunner::new_with_rng(
            Config {
                failure_persistence: None,
                ..Config::default()
            },
            TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(seed)),
        )
    }

    /// Checks `cases` values of `strategy`, and the values along a shrinking path of the
    /// first few, against `check`.
    fn check_values(
        strategy: &BoxedStrategy<Value>,
        cases: usize,
        check: impl Fn(&Value) -> Result<(), String>,
    ) {
        let mut runner = runner(7);
        for case in 0..cases {
            let mut tree = strategy.new_tree(&mut runner).unwrap();
            check(&tree.current()).unwrap();
            if case < 50 {
                for _ in 0..40 {
                    if !tree.simplify() {
                        break;
                    }
                    check(&tree.current()).unwrap();
                }
            }
        }
    }

    #[test]
    fn reference_schemas_are_the_six_tools() {
        let names: Vec<String> = reference_schemas().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "read_file",
                "write_file",
                "list_dir",
                "exec",
                "status",
                "retry"
            ]
        );
    }

    #[test]
    fn valid_arguments_validate() {
        for (name, schema) in all_schemas() {
            let validator = jsonschema::validator_for(&schema).unwrap();
            check_values(&valid_arguments(&schema), 500, |value| {
                if validator.is_valid(value) {
                    Ok(())
                } else {
                    Err(format!("{name}: generated invalid value {value}"))
                }
            });
        }
    }

    #[test]
    fn invalid_arguments_do_not_validate() {
        for (name, schema) in all_schemas() {
            let validator = jsonschema::validator_for(&schema).unwrap();
            check_values(&invalid_arguments(&schema), 500, |value| {
                if validator.is_valid(value) {
                    Err(format!("{name}: generated valid value {value}"))
                } else {
                    Ok(())
                }
            });
        }
    }

    #[test]
    fn invalid_arguments_use_every_mutation() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": false
        });
        let strategy = invalid_arguments(&schema);
        let mut runner = runner(3);
        let (mut dropped, mut wrong, mut unknown, mut non_object) = (0, 0, 0, 0);
        for _ in 0..400 {
            let value = strategy.new_tree(&mut runner).unwrap().current();
            match value.as_object() {
                None => non_object += 1,
                Some(o) if o.contains_key("unexpected") => unknown += 1,
                Some(o) => match o.get("path") {
                    None => dropped += 1,
                    Some(p) if !p.is_string() => wrong += 1,
                    Some(p) => panic!("valid value {p}"),
                },
            }
        }
        assert!(dropped > 0 && wrong > 0 && unknown > 0 && non_object > 0);
    }

    #[test]
    fn invalid_arguments_fall_back_to_a_non_object() {
        for schema in [json!(true), json!({}), json!({"properties": {"a": {}}})] {
            check_values(&invalid_arguments(&schema), 100, |value| {
                if value.is_object() {
                    Err(format!("object {value} for {schema}"))
                } else {
                    Ok(())
                }
            });
        }
    }

    #[test]
    fn arguments_are_mostly_valid_and_tagged() {
        let schema = reference_schemas().swap_remove(1).1;
        let validator = jsonschema::validator_for(&schema).unwrap();
        let strategy = arguments(&schema);
        let mut runner = runner(11);
        let mut valid = 0;
        for _ in 0..400 {
            let generated = strategy.new_tree(&mut runner).unwrap().current();
            assert_eq!(generated.valid, validator.is_valid(&generated.arguments));
            valid += usize::from(generated.valid);
        }
        assert!((240..=360).contains(&valid), "{valid} of 400 valid");
    }

    fn record(seed: u64, schema: &Value) -> Vec<Generated> {
        let seen = RefCell::new(Vec::new());
        let config = GenConfig {
            seed,
            cases: 50,
            ..GenConfig::default()
        };
        let report = run(&config, arguments(schema), |generated| {
            seen.borrow_mut().push(generated.clone());
            Ok(())
        });
        assert_eq!(report.cases_run, 50);
        assert!(report.failure.is_none() && report.aborted.is_none());
        seen.into_inner()
    }

    #[test]
    fn same_seed_same_sequence_different_seed_differs() {
        let schema = mixed_schema();
        let first = record(42, &schema);
        assert_eq!(first.len(), 50);
        assert_eq!(first, record(42, &schema));
        assert_ne!(first, record(43, &schema));
        assert_ne!(first, record(0, &schema));
    }

    fn longest_string(value: &Value) -> usize {
        match value {
            Value::String(s) => s.chars().count(),
            Value::Array(items) => items.iter().map(longest_string).max().unwrap_or(0),
            Value::Object(map) => map.values().map(longest_string).max().unwrap_or(0),
            _ => 0,
        }
    }

    fn shrink_long_string(schema: &Value) -> GenFailure {
        let report = run(&GenConfig::default(), arguments(schema), |generated| {
            let n = longest_string(&generated.arguments);
            if n > 10 {
                Err(format!("a string of {n} characters"))
            } else {
                Ok(())
            }
        });
        assert!(report.cases_run >= 1 && report.cases_run <= 100);
        report.failure.expect("some string is longer than 10")
    }

    #[test]
    fn shrinks_to_a_minimal_string() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string", "maxLength": 40}},
            "required": ["path"]
        });
        let read_file = reference_schemas().swap_remove(0).1;
        for schema in [schema, read_file] {
            let failure = shrink_long_string(&schema);
            assert_eq!(
                failure.minimal,
                Generated {
                    valid: true,
                    arguments: json!({"path": "a".repeat(11)})
                }
            );
            assert_eq!(failure.message, "a string of 11 characters");
            let original = failure.original.expect("first failure kept");
            assert!(longest_string(&original.arguments) > 10);
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        assert!(!root.join("proptest-regressions").exists());
        assert!(!root.join("src/proptest-regressions").exists());
    }

    #[test]
    fn a_panicking_test_is_a_failure() {
        let schema = reference_schemas().swap_remove(0).1;
        let report = run(
            &GenConfig::default(),
            valid_arguments(&schema)
                .prop_map(|a| Generated {
                    valid: true,
                    arguments: a,
                })
                .boxed(),
            |_| panic!("boom"),
        );
        assert_eq!(report.cases_run, 1);
        let failure = report.failure.expect("fails");
        assert_eq!(failure.message, "test panicked: boom");
        assert_eq!(failure.minimal.arguments, json!({"path": ""}));
    }

    #[test]
    fn without_shrinking_the_minimal_is_the_original() {
        let schema = reference_schemas().swap_remove(3).1;
        let config = GenConfig {
            max_shrink_iters: 0,
            ..GenConfig::default()
        };
        let report = run(&config, arguments(&schema), |g| {
            if g.valid {
                Ok(())
            } else {
                Err("invalid".to_owned())
            }
        });
        let failure = report.failure.expect("some invalid call");
        assert_eq!(Some(failure.minimal), failure.original);
    }

    #[test]
    fn scenario_step_is_one_line_of_json_flow() {
        let generated = Generated {
            valid: true,
            arguments: json!({"path": "a b/é✓\"x\n", "n": [1, null]}),
        };
        let step = scenario_step("read_file", &generated);
        assert!(!step.contains('\n'));
        let call = step.strip_prefix("- call: ").unwrap();
        let parsed: Value = serde_json::from_str(call).unwrap();
        assert_eq!(
            parsed,
            json!({"name": "read_file", "arguments": generated.arguments})
        );
        let yaml: Value = serde_saphyr::from_str(&step).unwrap();
        assert_eq!(yaml, json!([{"call": parsed}]));
        assert_eq!(
            scenario_step(
                "read_file",
                &Generated {
                    valid: true,
                    arguments: json!({"path": "aaaaaaaaaaa"})
                }
            ),
            r#"- call: {"name":"read_file","arguments":{"path":"aaaaaaaaaaa"}}"#
        );
    }

    #[test]
    fn local_refs_and_recursion_terminate() {
        let schema = json!({
            "$ref": "#/$defs/tree",
            "$defs": {
                "tree": {
                    "type": "object",
                    "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
                    "required": ["kids"]
                },
                "loop": {"$ref": "#/$defs/loop"}
            }
        });
        let validator = jsonschema::validator_for(&schema).unwrap();
        check_values(&valid_arguments(&schema), 100, |value| {
            if validator.is_valid(value) {
                Ok(())
            } else {
                Err(format!("invalid {value}"))
            }
        });
        // A reference loop is treated as `true`.
        let looped = json!({"$ref": "#/$defs/loop", "$defs": {"loop": {"$ref": "#/$defs/loop"}}});
        let mut runner = runner(1);
        valid_arguments(&looped).new_tree(&mut runner).unwrap();
    }

    #[test]
    fn samples_are_valid_and_repeatable() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}, "required": ["n"]});
        let a = sample_valid(&schema, 5, 3);
        assert_eq!(a.len(), 3);
        assert_eq!(a, sample_valid(&schema, 5, 3));
        assert!(a.iter().all(|v| v["n"].as_i64().is_some_and(|n| n >= 3)));
    }

    #[test]
    fn seed_bytes_differ_per_seed() {
        assert_ne!(seed_bytes(0), seed_bytes(1));
        assert_eq!(seed_bytes(9), seed_bytes(9));
    }
}
