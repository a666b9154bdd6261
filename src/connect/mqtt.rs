//! `connector = 'mqtt'`.

use super::runner::{Ctx, Halt};
use super::spec::MqttSpec;

pub(crate) async fn run(_spec: &MqttSpec, _ctx: &mut Ctx) -> Result<(), Halt> {
    Err(Halt::Retry("mqtt: not yet".into()))
}
