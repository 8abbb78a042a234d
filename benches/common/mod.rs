//! What the benchmarks share: the real DGT captures, read from `../shared/captures/dgt-arnsholt/`.

/// The three real games.
pub const CAPTURES: [&str; 3] = ["1", "2", "johan"];

/// The text of each capture, in [`CAPTURES`] order.
pub fn texts() -> Vec<String> {
    CAPTURES
        .iter()
        .map(|name| {
            let path = format!(
                "{}/../shared/captures/dgt-arnsholt/{name}.capture",
                env!("CARGO_MANIFEST_DIR")
            );
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
        })
        .collect()
}
