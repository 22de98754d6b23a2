//! Fuzzing the ETH amount parser of the tool inputs: it never panics, refuses what is not a plain
//! decimal amount, and every amount the tools print reads back as the same wei.

use agentpact_mcp::input::{eth, eth_amount};
use alloy::primitives::U256;
use proptest::prelude::*;

proptest! {
    #[test]
    fn no_input_makes_it_panic(text in ".{0,80}") {
        let _ = eth_amount("paymentEth", &text);
    }

    #[test]
    fn printed_amounts_read_back_exactly(wei in any::<u128>()) {
        let wei = U256::from(wei);
        prop_assert_eq!(eth_amount("paymentEth", &eth(wei)), Ok(wei));
    }

    #[test]
    fn signs_exponents_and_letters_are_refused(n in 0u64..1_000_000, suffix in "[eE+-][0-9]{1,3}|[a-zA-Z]{1,4}") {
        let (suffixed, negative) = (format!("{n}{suffix}"), format!("-{n}"));
        prop_assert!(eth_amount("paymentEth", &suffixed).is_err());
        prop_assert!(eth_amount("paymentEth", &negative).is_err());
    }
}
