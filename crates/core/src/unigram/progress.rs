//! What the unigram trainer reports while it works, and how a caller stops it.

/// Where training is; see [`Progress`].
#[derive(Clone, Copy, Debug)]
pub enum Stage {
    /// The seed table is built.
    Seeded { table_size: usize },
    /// An EM sub-iteration is done (rounds and iterations count from 0).
    Em {
        round: usize,
        iteration: usize,
        table_size: usize,
        objective: f64,
    },
    /// A pruning is done.
    Pruned { round: usize, table_size: usize },
    /// A part of a long step is done: nothing to show, a chance to stop.
    Working,
}

/// What the trainer reports while it works; returning false stops it with
/// [`crate::Error::Interrupted`].
pub trait Progress {
    fn report(&mut self, stage: Stage) -> bool;
}

impl<F: FnMut(Stage) -> bool> Progress for F {
    fn report(&mut self, stage: Stage) -> bool {
        self(stage)
    }
}
