//! Layer 5, reports: the console summary, JSON report files and their reading, JUnit, the HTML
//! matrix, baselines and the catalogue document.
//!
//! Invariant: reads finished reports; runs nothing.

pub mod baseline;
pub mod catalogue_doc;
pub mod html;
pub mod junit;
pub mod report;
pub mod report_file;
pub mod summary;
