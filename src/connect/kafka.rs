//! `connector = 'kafka'`.

use super::runner::{Ctx, Halt};
use super::spec::KafkaSpec;

pub(crate) async fn run(_spec: &KafkaSpec, _ctx: &mut Ctx) -> Result<(), Halt> {
    Err(Halt::Retry("the kafka connector is not built yet".into()))
}
