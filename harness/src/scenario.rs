//! Scenario files v1 (YAML). See `docs/scenarios.md`.
