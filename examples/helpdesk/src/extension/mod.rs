//! Extensions: bundles that contribute tools to the desk. The one shipped
//! here, the shipping extension, contributes `track_shipment`.
//!
//! An extension has two halves that must both happen: its manifest declares
//! the tools and the arguments each takes (this is what the capability
//! evidence and the model's tool list are built from), and its binding puts
//! an implementation behind each declared name. The desk reaches a bound
//! tool through a bridge that forwards the arguments the manifest declares
//! and reports the body's outcome as it was. The body itself witnesses each
//! execution in the harness's ledger: what it received and how it ended, so
//! a bridge that loses arguments or dresses up a failure disagrees with it.

mod carrier;

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde_json::{json, Map, Value};
use symfonic_evals::WitnessOutcome;

use crate::tools::{Tool, ToolCatalog, ToolEnv, ToolFailure};
use crate::twins::Flaw;

/// A declared tool: its name and the arguments it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declared {
    /// The registered name.
    pub name: &'static str,
    /// The argument names the bridge forwards.
    pub arguments: &'static [&'static str],
}

/// A bundle of contributed tools.
pub trait Extension {
    /// The tools its manifest declares.
    fn manifest(&self) -> Vec<Declared>;
    /// Binds an implementation for every declared tool (with `flaw`
    /// switched on, if it is one of the extension's).
    fn bind(&self, catalog: &mut ToolCatalog, flaw: Option<Flaw>);
}

/// Parcel tracking through the shop's carriers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShippingExtension<'a> {
    /// Whether the manifest declares `detail` (`"summary"` by default,
    /// `"full"` adds the last scan): the `DefaultedToolArgument` variant's.
    pub defaulted_detail: bool,
    /// The carrier's MCP server, when tracking runs there rather than on
    /// the desk's own copy of the timetable.
    pub carrier_server: Option<&'a str>,
}

/// The tool the shipping extension contributes.
pub const TRACK_SHIPMENT: &str = "track_shipment";

const TRACKING: Declared = Declared {
    name: TRACK_SHIPMENT,
    arguments: &["order", "include_eta"],
};

/// The manifest's schema with the defaulted `detail` argument.
const TRACKING_WITH_DETAIL: Declared = Declared {
    name: TRACK_SHIPMENT,
    arguments: &["order", "include_eta", "detail"],
};

/// The first manifest's schema, before `include_eta` existed.
const TRACKING_V1: &[&str] = &["order"];

impl Extension for ShippingExtension<'_> {
    fn manifest(&self) -> Vec<Declared> {
        vec![self.tracking()]
    }

    fn bind(&self, catalog: &mut ToolCatalog, flaw: Option<Flaw>) {
        let feed = if flaw == Some(Flaw::UpstreamErrorReportedAsSuccess) {
            CarrierFeed::Unreachable
        } else {
            CarrierFeed::Live
        };
        let forwards = if flaw == Some(Flaw::BridgeDropsArguments) {
            TRACKING_V1
        } else {
            self.tracking().arguments
        };
        let body: Box<dyn Tool> = match self.carrier_server {
            Some(url) => match carrier::CarrierServer::connect(url) {
                Ok(server) => Box::new(carrier::RemoteTracking { server }),
                // Declared, and unbound until the server answers.
                Err(_) => return,
            },
            None => Box::new(TrackShipment { feed }),
        };
        catalog.register(Box::new(Bridge {
            body,
            forwards,
            // Serves the timetable's estimate when the live feed fails.
            falls_back: flaw == Some(Flaw::UpstreamErrorReportedAsSuccess),
            cache: (flaw == Some(Flaw::ResultServedFromCache)).then(Mutex::default),
        }));
    }
}

impl ShippingExtension<'_> {
    fn tracking(&self) -> Declared {
        if self.defaulted_detail {
            TRACKING_WITH_DETAIL
        } else {
            TRACKING
        }
    }
}

/// The carrier feed a tracking body asks. The shop's carriers publish a
/// fixed timetable keyed on the order number, so answers are reproducible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CarrierFeed {
    Live,
    /// Every request times out (the upstream the flawed twin runs against).
    Unreachable,
}

const SCHEDULE: [(&str, u64); 4] = [
    ("delivered", 0),
    ("awaiting pickup", 4),
    ("out for delivery", 1),
    ("in transit", 2),
];
const CARRIERS: [&str; 2] = ["Northpost", "Parcelway"];

/// The timetable's entry for `order`: status, carrier, days to go.
fn timetable(order: u64) -> (&'static str, &'static str, u64) {
    let (status, eta_days) = SCHEDULE[(order % 4) as usize];
    (status, CARRIERS[(order % 2) as usize], eta_days)
}

impl CarrierFeed {
    fn track(self, order: u64) -> Result<(&'static str, &'static str, u64), ToolFailure> {
        match self {
            Self::Live => Ok(timetable(order)),
            Self::Unreachable => Err(ToolFailure::new(
                "carrier_unavailable",
                "the carrier feed did not answer",
            )),
        }
    }
}

fn result(order: u64, tracked: (&str, &str, u64), include_eta: bool) -> Value {
    let (status, carrier, eta_days) = tracked;
    let mut result = json!({ "order": order, "status": status, "carrier": carrier });
    if include_eta {
        result["eta_days"] = json!(eta_days);
    }
    result
}

/// Looks up where an order's parcel is, with the expected days to go when
/// asked for them.
struct TrackShipment {
    feed: CarrierFeed,
}

impl TrackShipment {
    fn track(&self, arguments: &Value) -> Result<Value, ToolFailure> {
        let order = arguments
            .get("order")
            .and_then(Value::as_u64)
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                ToolFailure::new("bad_arguments", "`order` must be a positive integer")
            })?;
        let include_eta = arguments
            .get("include_eta")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let full = match arguments.get("detail").map(Value::as_str) {
            None | Some(Some("summary")) => false,
            Some(Some("full")) => true,
            Some(_) => {
                return Err(ToolFailure::new(
                    "bad_arguments",
                    "`detail` must be \"summary\" or \"full\"",
                ))
            }
        };
        let mut tracked = result(order, self.feed.track(order)?, include_eta);
        if full {
            tracked["last_scan"] = json!("regional depot");
        }
        Ok(tracked)
    }
}

impl Tool for TrackShipment {
    fn name(&self) -> &str {
        TRACK_SHIPMENT
    }

    fn run(&self, arguments: &Value, env: ToolEnv<'_>) -> Result<Value, ToolFailure> {
        let outcome = self.track(arguments);
        let witnessed = match &outcome {
            Ok(result) => WitnessOutcome::succeeded(result.clone()),
            Err(failure) => WitnessOutcome::failed(&failure.code),
        };
        env.ledger.witness(TRACK_SHIPMENT, arguments, witnessed);
        outcome
    }
}

/// What stands between the desk's dispatcher and an extension's body.
struct Bridge {
    body: Box<dyn Tool>,
    forwards: &'static [&'static str],
    falls_back: bool,
    /// Results by the arguments that asked for them: the
    /// `ResultServedFromCache` twin's.
    cache: Option<Mutex<HashMap<String, Value>>>,
}

impl Tool for Bridge {
    fn name(&self) -> &str {
        self.body.name()
    }

    fn run(&self, arguments: &Value, env: ToolEnv<'_>) -> Result<Value, ToolFailure> {
        let forwarded: Map<String, Value> = arguments
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(name, _)| self.forwards.contains(&name.as_str()))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        let forwarded = Value::Object(forwarded);
        if let Some(cache) = &self.cache {
            let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(hit) = cache.get(&forwarded.to_string()) {
                return Ok(hit.clone());
            }
            let outcome = self.body.run(&forwarded, env);
            if let Ok(result) = &outcome {
                cache.insert(forwarded.to_string(), result.clone());
            }
            return outcome;
        }
        match self.body.run(&forwarded, env) {
            Err(failure) if self.falls_back => {
                let order = forwarded.get("order").and_then(Value::as_u64);
                let include_eta = forwarded.get("include_eta") == Some(&json!(true));
                order
                    .map(|order| result(order, timetable(order), include_eta))
                    .ok_or(failure)
            }
            outcome => outcome,
        }
    }
}
