//! Case selection: `--filter`/`--skip` globs and the deterministic `--partition` of a run into
//! CI shards (docs/ci.md §Sharding).
//!
//! Case ids are `check@binding#revision`. A selection keeps a case when it matches a `--filter`
//! glob (or none is given), matches no `--skip` glob, and falls in the partition's shard.
//!
//! Partitions, both deterministic for one parity version, scenario set and target:
//! - `hash:K/N`: the case whose id's SHA-256, read as a big-endian `u64` from its first 8 bytes,
//!   is `K-1` modulo `N`. Balanced on average; independent of which other cases exist.
//! - `count:K/N`: round-robin over the sorted list of selection units, one per check of
//!   `parity list` written `check@binding` (scenarios included; a generated or per-scenario
//!   equivalence case counts under its family `equivalence.generated`/`equivalence.scenario`):
//!   the unit at sorted
//!   position `i` (0-based) goes to shard `i mod N + 1`. Every case of a check (each era,
//!   each revision) lands in one shard, so shards are balanced by check count.
//!
//! Shards `1/N`…`N/N` together select every case exactly once.

use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// How a run is split into shards (`--partition`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Partition {
    /// `hash:K/N`: by the hash of the case id.
    Hash {
        /// 1-based shard.
        k: u64,
        /// Shard count, at least 1.
        n: u64,
    },
    /// `count:K/N`: round-robin over the sorted selection units.
    Count {
        /// 1-based shard.
        k: u64,
        /// Shard count, at least 1.
        n: u64,
    },
}

impl Partition {
    /// Parses `hash:K/N`, `count:K/N` or a bare `K/N` (taken as `hash`), with `1 ≤ K ≤ N`.
    ///
    /// Errors: any other shape, a zero or non-numeric part, or `K > N`, with the reason.
    pub fn parse(s: &str) -> Result<Partition, String> {
        let (kind, rest) = match s.split_once(':') {
            Some((kind, rest)) => (kind, rest),
            None => ("hash", s),
        };
        let bad = || {
            format!("--partition {s:?}: expected hash:K/N or count:K/N with 1 <= K <= N (e.g. hash:2/3)")
        };
        let (k, n) = rest.split_once('/').ok_or_else(bad)?;
        let k: u64 = k.trim().parse().map_err(|_| bad())?;
        let n: u64 = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        match kind {
            "hash" => Ok(Partition::Hash { k, n }),
            "count" => Ok(Partition::Count { k, n }),
            _ => Err(bad()),
        }
    }

    /// The canonical text, `hash:K/N` or `count:K/N`.
    pub fn describe(&self) -> String {
        match self {
            Partition::Hash { k, n } => format!("hash:{k}/{n}"),
            Partition::Count { k, n } => format!("count:{k}/{n}"),
        }
    }
}

/// The `check@binding` unit of a case id (the part before `#`).
fn unit_of(case_id: &str) -> &str {
    case_id.split('#').next().unwrap_or(case_id)
}

/// A selection over case ids: `--filter`, `--skip` and `--partition`.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    keep: Option<globset::GlobSet>,
    drop: Option<globset::GlobSet>,
    partition: Option<Partition>,
    /// `count:` partitions: each known unit's sorted position.
    positions: HashMap<String, usize>,
    /// Cases `--filter`/`--skip` kept that the partition left to other shards.
    sharded_out: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Selection {
    /// A selection from the globs (see [`crate::engine::run::glob_set`]: a bare check id selects every
    /// case of that check and of the checks below it), a partition, and the units of the run
    /// (`check@binding` strings, as [`units`] lists them; used by `count:` only).
    ///
    /// Errors: an invalid glob.
    pub fn new(
        filter: &[String],
        skip: &[String],
        partition: Option<Partition>,
        units: &[String],
    ) -> Result<Selection, String> {
        let mut sorted: Vec<&String> = units.iter().collect();
        sorted.sort();
        sorted.dedup();
        Ok(Selection {
            keep: crate::engine::run::glob_set(filter)?,
            drop: crate::engine::run::glob_set(skip)?,
            partition,
            positions: sorted
                .into_iter()
                .enumerate()
                .map(|(i, u)| (u.clone(), i))
                .collect(),
            sharded_out: Default::default(),
        })
    }

    /// Whether the case with this id runs.
    pub fn selects(&self, case_id: &str) -> bool {
        let kept = self.keep.as_ref().is_none_or(|k| k.is_match(case_id))
            && self.drop.as_ref().is_none_or(|d| !d.is_match(case_id));
        if kept && !self.in_shard(case_id) {
            self.sharded_out
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return false;
        }
        kept
    }

    /// How many cases the filters kept but the partition left to other shards: an empty shard
    /// with none is an empty selection (a `--filter` that matches nothing), not an empty shard.
    pub fn sharded_out(&self) -> usize {
        self.sharded_out.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the case falls in this run's shard (always, without `--partition`).
    pub fn in_shard(&self, case_id: &str) -> bool {
        match &self.partition {
            None => true,
            Some(Partition::Hash { k, n }) => hash_shard(case_id, *n) == *k,
            Some(Partition::Count { k, n }) => match self.position(case_id) {
                Some(i) => (i as u64) % n + 1 == *k,
                // A case outside every known unit falls back to its hash.
                None => hash_shard(case_id, *n) == *k,
            },
        }
    }

    /// The sorted position of the case's unit, or of the closest family above it
    /// (`equivalence.generated.read_file@equivalence` → `equivalence.generated@equivalence`).
    fn position(&self, case_id: &str) -> Option<usize> {
        let unit = unit_of(case_id);
        let (mut check, binding) = unit.split_once('@').unwrap_or((unit, ""));
        loop {
            if let Some(i) = self.positions.get(&format!("{check}@{binding}")) {
                return Some(*i);
            }
            check = check.rsplit_once('.')?.0;
        }
    }

    /// The partition, when the run has one.
    pub fn partition(&self) -> Option<&Partition> {
        self.partition.as_ref()
    }
}

/// The 1-based shard of `case_id` among `n` by hash.
fn hash_shard(case_id: &str, n: u64) -> u64 {
    let d = Sha256::digest(case_id.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_be_bytes(b) % n.max(1) + 1
}

/// The selection units of a run with these scenarios, as `check@binding`: every check of every
/// profile of `registry` at each binding it runs at, each scenario (MCP stdio binding), and the
/// check families (`equivalence.scenario@equivalence`).
pub fn units(
    registry: &crate::engine::profile::Registry,
    scenarios: &[std::sync::Arc<crate::engine::scenario::Scenario>],
) -> Vec<String> {
    let mut v: Vec<String> = registry
        .checks()
        .iter()
        .flat_map(|(bindings, c)| {
            bindings
                .split(", ")
                .map(|b| format!("{}@{b}", c.id))
                .collect::<Vec<_>>()
        })
        .chain(
            registry
                .families()
                .iter()
                .map(|f| format!("{}@{}", f.id, f.binding)),
        )
        .chain(
            scenarios
                .iter()
                .map(|s| format!("{}@{}", s.id, crate::engine::scenario::BINDING)),
        )
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Whether `check` names a check parity knows: a check of a profile of `registry`, a scenario
/// of the run, a check family, or a case of one (`equivalence.generated.<tool>`,
/// `equivalence.scenario.<scenario id>`). Used to refuse baselines that name unknown checks.
pub fn known_check(
    registry: &crate::engine::profile::Registry,
    check: &str,
    scenarios: &[std::sync::Arc<crate::engine::scenario::Scenario>],
) -> bool {
    registry.knows(check) || scenarios.iter().any(|s| s.id == check)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn parses_partitions_and_refuses_bad_ones() {
        assert_eq!(
            Partition::parse("hash:2/3").unwrap(),
            Partition::Hash { k: 2, n: 3 }
        );
        assert_eq!(
            Partition::parse("count:1/1").unwrap(),
            Partition::Count { k: 1, n: 1 }
        );
        assert_eq!(
            Partition::parse("3/3").unwrap(),
            Partition::Hash { k: 3, n: 3 }
        );
        for bad in ["0/3", "4/3", "hash:1/0", "rr:1/2", "1-2", "hash:a/2", ""] {
            assert!(Partition::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_cover_every_case_exactly_once() {
        let ids: Vec<String> = (0..200)
            .map(|i| format!("mcp.c{}@mcp-stdio#r{}", i % 37, i % 3))
            .chain(["equivalence.generated.read_file@equivalence#all".to_string()])
            .collect();
        let units: Vec<String> = (0..37).map(|i| format!("mcp.c{i}@mcp-stdio")).collect();
        for kind in ["hash", "count"] {
            let n = 4;
            let mut hits = vec![0; ids.len()];
            for k in 1..=n {
                let p = Partition::parse(&format!("{kind}:{k}/{n}")).unwrap();
                let s = Selection::new(&[], &[], Some(p), &units).unwrap();
                for (i, id) in ids.iter().enumerate() {
                    if s.selects(id) {
                        hits[i] += 1;
                    }
                }
            }
            assert!(hits.iter().all(|h| *h == 1), "{kind}: {hits:?}");
        }
    }

    #[test]
    fn count_keeps_a_checks_cases_together_and_balances() {
        let units: Vec<String> = (0..9).map(|i| format!("c{i}@b")).collect();
        let s = Selection::new(&[], &[], Partition::parse("count:2/3").ok(), &units).unwrap();
        let picked: Vec<&String> = units
            .iter()
            .filter(|u| s.selects(&format!("{u}#r")))
            .collect();
        assert_eq!(picked.len(), 3);
        assert_eq!(s.selects("c1@b#r1"), s.selects("c1@b#r2"));
    }
}
