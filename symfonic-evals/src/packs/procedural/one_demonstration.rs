//! The one-demonstration probe: a single demonstration, then a control
//! turn, then the rest of the demonstrations. The control turn has
//! nothing to teach, so its cycle promotes nothing whatever the
//! deployment's threshold; a promotion threshold counted over the turns
//! since a lesson was first seen (or over every turn after it) rather
//! than over the demonstrations themselves promotes there.

use serde_json::json;

use super::ProceduralPack;
use crate::assertion::Assertion;
use crate::scenario::Step;

impl ProceduralPack {
    /// Whether the probe has what it needs: a control turn, and a
    /// demonstration left to send after it.
    pub(super) fn one_demonstration_runs(&self) -> bool {
        !self.control_demonstrations.is_empty() && self.demonstrations.len() >= 2
    }

    /// The first demonstration, the first control turn (promoting
    /// nothing), then the other demonstrations, the last of which must
    /// still promote.
    pub(super) fn one_demonstration_steps(&self) -> Vec<Step> {
        let c = self.conversation.as_str();
        let (first, rest) = self.demonstrations.split_at(1);
        let mut steps = vec![Step::prompt("demonstration 1", &first[0], c)];
        let control = self
            .control_demonstrations
            .first()
            .cloned()
            .unwrap_or_default();
        steps.push(
            Step::prompt("control after one demonstration", control, c).asserting([
                Assertion::attribute_equals(&self.promotion_attribute, json!(0)),
            ]),
        );
        let mut rest = self.demonstrations(rest, "demonstration", c);
        for (i, step) in rest.iter_mut().enumerate() {
            step.label = format!("demonstration {}", i + 2);
        }
        steps.extend(rest);
        steps
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::packs::procedural::fixture::refund_pack;
    use crate::packs::procedural::ONE_DEMONSTRATION;

    fn pack(demonstrations: &[&str], controls: &[&str]) -> ProceduralPack {
        ProceduralPack {
            demonstrations: demonstrations.iter().map(|d| (*d).to_owned()).collect(),
            control_demonstrations: controls.iter().map(|c| (*c).to_owned()).collect(),
            ..refund_pack()
        }
    }

    fn runs(pack: &ProceduralPack) -> bool {
        pack.scenarios().iter().any(|s| s.name == ONE_DEMONSTRATION)
    }

    #[test]
    fn a_control_turn_after_the_first_demonstration_promotes_nothing() {
        let two = pack(&["refund order 1", "refund order 2"], &["hello"]);
        assert!(runs(&two));
        let steps = two.one_demonstration_steps();
        let labels: Vec<&str> = steps.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "demonstration 1",
                "control after one demonstration",
                "demonstration 2"
            ]
        );
        assert!(steps[1].assertions.iter().any(|a| matches!(
            a,
            Assertion::AttributeEquals { expected, .. } if *expected == json!(0)
        )));
        assert!(steps[2]
            .assertions
            .iter()
            .any(|a| matches!(a, Assertion::AttributeCount { minimum: 1, .. })));
    }

    #[test]
    fn needs_a_control_turn_and_a_second_demonstration() {
        assert!(!runs(&pack(&["refund order 1", "refund order 2"], &[])));
        assert!(!runs(&pack(&["refund order 1"], &["hello"])));
    }
}
