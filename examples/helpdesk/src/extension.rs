//! Extensions: bundles that contribute tools to the desk. The one shipped
//! here, the shipping extension, contributes `track_shipment`.
//!
//! An extension has two halves that must both happen: its manifest declares
//! the tools (this is what the capability evidence and the model's tool list
//! are built from) and its binding puts an implementation behind each
//! declared name. A declaration with no binding is a tool the model is
//! offered and can never run.

use serde_json::{json, Value};

use crate::tools::{Tool, ToolCatalog, ToolEnv, ToolFailure};

/// A bundle of contributed tools.
pub trait Extension {
    /// The tools its manifest declares.
    fn manifest(&self) -> Vec<&'static str>;
    /// Binds an implementation for every declared tool.
    fn bind(&self, catalog: &mut ToolCatalog);
}

/// Parcel tracking through the shop's carriers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShippingExtension;

/// The tool the shipping extension contributes.
pub const TRACK_SHIPMENT: &str = "track_shipment";

impl Extension for ShippingExtension {
    fn manifest(&self) -> Vec<&'static str> {
        vec![TRACK_SHIPMENT]
    }

    fn bind(&self, catalog: &mut ToolCatalog) {
        catalog.register(Box::new(TrackShipment));
    }
}

/// Looks up where an order's parcel is. The carrier feed is simulated by a
/// fixed schedule keyed on the order number, so answers are reproducible.
struct TrackShipment;

const SCHEDULE: [(&str, u64); 4] = [
    ("delivered", 0),
    ("awaiting pickup", 4),
    ("out for delivery", 1),
    ("in transit", 2),
];
const CARRIERS: [&str; 2] = ["Northpost", "Parcelway"];

impl Tool for TrackShipment {
    fn name(&self) -> &str {
        TRACK_SHIPMENT
    }

    fn run(&self, arguments: &Value, _env: ToolEnv<'_>) -> Result<Value, ToolFailure> {
        let order = arguments
            .get("order")
            .and_then(Value::as_u64)
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                ToolFailure::new("bad_arguments", "`order` must be a positive integer")
            })?;
        let (status, eta_days) = SCHEDULE[(order % 4) as usize];
        Ok(json!({
            "order": order,
            "status": status,
            "carrier": CARRIERS[(order % 2) as usize],
            "eta_days": eta_days,
        }))
    }
}
