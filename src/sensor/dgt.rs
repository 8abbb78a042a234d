//! DGT sensor state.
