// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ReentrancyGuard} from "./ReentrancyGuard.sol";

/// @title PactStorage
/// @notice What the escrow's three contracts share: its types, events and errors, every state
///         variable in one order, and the helpers more than one of them needs. The escrow is one
///         address and one storage: `AgentPact` (the core: money in and out) hands every call it
///         does not implement to `AgentPactLifecycle` (every act after creation), which hands what
///         it does not implement to `AgentPactViews` (the struct views), each by DELEGATECALL, so
///         the modules run on the core's storage and their events come from the core's address.
///         The core creates both modules in its constructor and keeps their addresses as
///         immutables: no proxy, no admin, no upgrade. None of the three declares a state variable
///         of its own (`contracts/build` fails the build when their storage layouts differ).
abstract contract PactStorage is ReentrancyGuard {
    /// @notice Pact status; the numbers are part of the public interface.
    enum Status {
        NEGOTIATING, // 0: open for the counterparty to accept
        FUNDED, // 1: both sides deposited
        IN_PROGRESS, // 2: seller started
        PENDING_VERIFY, // 3: work submitted, oracles scoring
        COMPLETED, // 4: seller paid
        DISPUTED, // 5: waiting for the arbitrator
        REFUNDED, // 6: buyer (or the creator of an unaccepted pact) refunded
        PENDING_APPROVAL, // 7: verification passed, buyer reviewing
        SPLIT // 8: the payment divided between the sides, by a settlement or a ruling
    }

    /// @notice How a pact ended, which its status alone does not say (a cancel and a lost dispute
    ///         both end REFUNDED); the numbers are part of the public interface. The status says
    ///         where the money went, the ending who decided it.
    enum Ending {
        LIVE, // 0: not ended
        COMPLETED, // 1: the buyer approved, or its review period lapsed
        REFUNDED_AFTER_FAILURE, // 2: the deadline passed with nothing delivered
        CANCELLED_BY_AGREEMENT, // 3: a settlement giving the seller none of the payment
        SPLIT, // 4: a settlement giving the seller some or all of the payment
        RULED, // 5: the arbitrator's ruling, at any share
        ARBITRATOR_SILENT, // 6: the dispute window lapsed without a ruling
        WITHDRAWN, // 7: the creator cancelled it before anyone accepted
        EXPIRED // 8: nobody accepted it in time
    }

    /// @notice Which side created the pact.
    enum Initiator {
        BUYER,
        SELLER
    }

    /// @notice The terms a creator proposes; the accepter agrees to all of them.
    struct Terms {
        Initiator initiator;
        bytes32 specHash;
        string specUri;
        uint64 deadline;
        /// Last second the pact can be accepted; 0 means `deadline - MIN_WORK_WINDOW`.
        uint64 acceptBy;
        uint64 reviewPeriod;
        uint8 threshold;
        address arbitrator;
        /// The only address that may accept; zero lets anyone (but the conflicted) accept.
        address counterparty;
        /// The currency of payment and stakes: zero for native ETH, else an allowed token.
        address currency;
        /// In base units of `currency`.
        uint256 payment;
        address[] oracles;
        uint8[] weights;
    }

    /// @notice A pact's full state.
    struct Pact {
        address buyer;
        address seller;
        address arbitrator;
        address counterparty;
        Initiator initiator;
        Status status;
        uint8 threshold;
        uint8 scoreCount;
        uint8 finalScore;
        uint64 deadline;
        uint64 acceptBy;
        uint64 reviewPeriod;
        uint64 submittedAt;
        uint64 verifiedAt;
        uint64 disputedAt;
        address currency;
        uint256 payment;
        uint256 buyerStake;
        uint256 sellerStake;
        bytes32 specHash;
        bytes32 proofHash;
        string specUri;
        address[] oracles;
        uint8[] weights;
    }

    /// @notice The standing offer to end a pact with the payment divided (at most one per pact).
    struct Settlement {
        /// The party that made it; zero when no offer stands (none made, withdrawn or accepted).
        address by;
        /// The pact's status when it was made: the offer lapses when the pact moves on.
        Status status;
        /// Basis points of the payment to the seller (the buyer gets the rest); stakes go back.
        uint16 sellerShare;
        /// Counts every offer made on the pact: an acceptance names the one it accepts.
        uint32 round;
        /// The last second it may be accepted (never after its status's window closes).
        uint64 expiresAt;
    }

    /// @notice What voids offers on a pact. Every verdict on it (an oracle's score, a `voidOffers`)
    ///         adds one to `epoch`; an offer records the epoch it was made at and can be accepted
    ///         only while that is still the epoch: it was priced on what was known then.
    struct Ledger {
        /// Verdicts given on the pact so far.
        uint32 epoch;
        /// The epoch the last offer was made at.
        uint32 offerEpoch;
        /// Who has used its `voidOffers` (bit i: the pact's oracle i; bit 15: the arbitrator).
        uint16 voided;
        /// How the pact ended (LIVE until it does).
        Ending ending;
    }

    /// @notice One oracle's verdict on one pact.
    struct Verification {
        bool submitted;
        uint8 score;
        uint64 submittedAt;
        bytes32 proof;
    }

    /// @notice The money the escrow keeps account of, per currency (zero: native ETH).
    struct Book {
        /// Base units credited to each account and not yet withdrawn: `credits[currency][account]`.
        mapping(address => mapping(address => uint256)) credits;
        /// Base units the escrow owes: locked in pacts plus unwithdrawn credits.
        mapping(address => uint256) owed;
        /// The currencies pacts may be paid in, fixed at construction.
        mapping(address => bool) allowed;
    }

    // Each part of the escrow writes some of these and only reads others (the views module writes
    // none): seen one contract at a time they look never written (docs/contracts.md §Slither).
    // slither-disable-start uninitialized-state
    Book internal book;
    /// @dev Number of pacts created; ids run from 0 to `nextPactId - 1`.
    uint256 internal nextPactId;
    mapping(uint256 => Pact) internal pacts;
    mapping(uint256 => mapping(address => Verification)) internal verifications;
    mapping(uint256 => Settlement) internal settlements;
    mapping(uint256 => Ledger) internal ledgers;
    // slither-disable-end uninitialized-state

    /// @notice A pact was proposed; carries every term. `deposit` is what the creator paid in.
    ///         `counterparty` is the only address that may accept (zero: anyone); `acceptBy` the last
    ///         second it may. Amounts are in base units of `currency`.
    event PactCreated(
        uint256 indexed pactId,
        address indexed creator,
        address indexed counterparty,
        Initiator initiator,
        address arbitrator,
        bytes32 specHash,
        string specUri,
        uint64 deadline,
        uint64 acceptBy,
        uint64 reviewPeriod,
        uint8 threshold,
        address currency,
        uint256 payment,
        uint256 stake,
        uint256 deposit,
        address[] oracles,
        uint8[] weights
    );
    /// @notice The counterparty joined; status FUNDED.
    event PactAccepted(
        uint256 indexed pactId, address indexed accepter, address buyer, address seller, uint256 deposit
    );
    /// @notice The creator withdrew an unaccepted pact; status REFUNDED.
    event PactCancelled(uint256 indexed pactId, address indexed creator);
    /// @notice The seller started; status IN_PROGRESS.
    event WorkStarted(uint256 indexed pactId, address indexed seller);
    /// @notice The seller delivered; status PENDING_VERIFY.
    event WorkSubmitted(uint256 indexed pactId, address indexed seller, bytes32 proofHash);
    /// @notice An oracle scored the work.
    event VerificationSubmitted(uint256 indexed pactId, address indexed oracle, uint8 score, bytes32 proof);
    /// @notice Scores were combined; status PENDING_APPROVAL when `passed`, else DISPUTED.
    event VerificationFinalized(uint256 indexed pactId, uint8 score, bool passed, uint8 scoreCount);
    /// @notice The buyer approved (or, with `auto_`, the review period lapsed); status COMPLETED.
    event WorkApproved(uint256 indexed pactId, address indexed by, bool auto_);
    /// @notice The buyer rejected verified work; status DISPUTED.
    event WorkRejected(uint256 indexed pactId, address indexed buyer);
    /// @notice A party raised a dispute; status DISPUTED.
    event DisputeRaised(uint256 indexed pactId, address indexed by, address arbitrator);
    /// @notice The arbitrator ruled `sellerShare` basis points of the pot to the seller; status
    ///         COMPLETED when that is all of it, REFUNDED when it rounds to nothing, SPLIT between.
    event DisputeResolved(uint256 indexed pactId, address indexed arbitrator, uint16 sellerShare);
    /// @notice A party offered to end the pact with `sellerShare` basis points of the payment to the
    ///         seller, until `expiresAt` and while the pact stays in `status`; it replaces any offer
    ///         that stood.
    event SettlementProposed(
        uint256 indexed pactId, address indexed by, Status status, uint32 round, uint16 sellerShare, uint64 expiresAt
    );
    /// @notice The party that made offer `round` took it back.
    event SettlementWithdrawn(uint256 indexed pactId, address indexed by, uint32 round);
    /// @notice `by`, about to give its verdict (the arbitrator, or an oracle that has not scored),
    ///         voided every offer standing on the pact; `epoch` is the pact's verdict count now.
    event OffersVoided(uint256 indexed pactId, address indexed by, uint32 epoch);
    /// @notice The other party accepted offer `round`; status COMPLETED when the seller's part is
    ///         all of the payment, REFUNDED when it rounds to nothing, SPLIT between.
    event SettlementAccepted(uint256 indexed pactId, address indexed by, uint32 round, uint16 sellerShare);
    /// @notice A deadline or window lapsed and `caller` ended the pact; status REFUNDED.
    ///         `from` is the status the pact had.
    event TimeoutClaimed(uint256 indexed pactId, address indexed caller, Status from);
    /// @notice The pact ended, how (`ending`) and in which status; the last event of its last
    ///         transaction, after its payouts.
    event PactEnded(uint256 indexed pactId, Ending ending, Status status);
    /// @notice `amount` base units of `currency` from pact `pactId` were credited to `to`.
    event Payout(uint256 indexed pactId, address indexed to, address currency, uint256 amount);

    error PactNotFound(uint256 pactId);
    error WrongStatus(Status have, Status want);
    error NoTimeoutFrom(Status have);
    error NotDisputable(Status have);
    error NotBuyer();
    error NotSeller();
    error NotParty();
    error NotCreator();
    error NotArbitrator();
    error NotPactOracle();
    error PaymentTooSmall(uint256 payment, uint256 minimum);
    error PaymentTooLarge(uint256 payment, uint256 maximum);
    error DeadlineInPast(uint64 deadline, uint64 now_);
    error DeadlineOutOfRange(uint64 deadline, uint64 earliest, uint64 latest);
    error AcceptByOutOfRange(uint64 acceptBy, uint64 earliest, uint64 latest);
    error ReviewPeriodTooLong(uint64 reviewPeriod, uint64 maximum);
    error ReviewPeriodTooShort(uint64 reviewPeriod, uint64 minimum);
    error ThresholdTooLow(uint8 threshold, uint8 minimum);
    error ShareTooLarge(uint16 share, uint16 maximum);
    error NotSettleable(Status have);
    error SettlementExpiryOutOfRange(uint64 expiresAt, uint64 earliest, uint64 latest);
    error NoSettlement(uint256 pactId);
    error NotProposer();
    error OwnSettlement();
    error SettlementReplaced(uint32 round, uint16 sellerShare);
    error SettlementStale(Status offeredIn, Status have);
    error SettlementExpired(uint64 expiresAt);
    error OfferVoided(uint32 offeredAt, uint32 epoch);
    error NotVerdictGiver(address who, Status have);
    error AlreadyVoided(address who);
    error SpecUriTooLong(uint256 length, uint256 maximum);
    error DeadlinePassed(uint64 deadline);
    error DeadlineNotReached(uint64 deadline);
    error AcceptWindowClosed(uint64 acceptBy);
    error AcceptWindowOpen(uint64 acceptBy);
    error NotCounterparty(address counterparty);
    error ReviewPeriodOver(uint64 endedAt);
    error VerificationClosed(uint64 closedAt);
    error OracleCountOutOfRange(uint256 count, uint256 minimum, uint256 maximum);
    error LengthMismatch(uint256 oracles, uint256 weights);
    error WeightsSum(uint256 sum);
    error ZeroWeight(address oracle);
    error DuplicateOracle(address oracle);
    error OracleNotActive(address oracle);
    error ThresholdTooHigh(uint8 threshold);
    error InvalidArbitrator(address arbitrator);
    error ConflictOfInterest(address who);
    error ArbitratorMismatch(address given, address agreed);
    error ZeroHash();
    error ScoreTooHigh(uint8 score);
    error AlreadyScored(address oracle);
    error VerificationOpen(uint8 scored, uint256 total, uint64 closesAt);
    error ReviewPeriodActive(uint64 endsAt);
    error DisputePeriodActive(uint64 endsAt);
    error DisputePeriodOver(uint64 endedAt);

    /// @dev Hands the current call to `module`, which runs it on this contract's storage, and
    ///      returns what it returned or reverts with what it reverted with, custom errors unchanged.
    ///      Never returns to the caller's code.
    function forward(address module) internal {
        assembly ("memory-safe") {
            let ptr := mload(0x40)
            calldatacopy(ptr, 0, calldatasize())
            let ok := delegatecall(gas(), module, ptr, calldatasize(), 0, 0)
            returndatacopy(ptr, 0, returndatasize())
            if iszero(ok) { revert(ptr, returndatasize()) }
            return(ptr, returndatasize())
        }
    }

    /// @dev Credits `amount` of the pact's currency to `to`, to be pulled with `withdraw`.
    function credit(uint256 pactId, address to, uint256 amount) internal {
        address currency = pacts[pactId].currency;
        book.credits[currency][to] += amount;
        emit Payout(pactId, to, currency, amount);
    }

    /// @dev Gives the creator of an unaccepted pact its deposit back.
    function refundCreator(uint256 pactId, Pact storage p) internal {
        if (p.initiator == Initiator.BUYER) {
            credit(pactId, p.buyer, p.payment + p.buyerStake);
        } else {
            credit(pactId, p.seller, p.sellerStake);
        }
    }

    /// @dev Records how the pact ended and says so; called last, after the pact's payouts.
    function end(uint256 pactId, Pact storage p, Ending ending) internal {
        ledgers[pactId].ending = ending;
        emit PactEnded(pactId, ending, p.status);
    }

    function creatorOf(Pact storage p) internal view returns (address) {
        return p.initiator == Initiator.BUYER ? p.buyer : p.seller;
    }

    function isPactOracle(Pact storage p, address who) internal view returns (bool) {
        for (uint256 i = 0; i < p.oracles.length; i++) {
            if (p.oracles[i] == who) return true;
        }
        return false;
    }

    function pactExists(uint256 pactId) internal view returns (Pact storage p) {
        if (pactId >= nextPactId) revert PactNotFound(pactId);
        p = pacts[pactId];
    }

    function pactAt(uint256 pactId, Status want) internal view returns (Pact storage p) {
        p = pactExists(pactId);
        if (p.status != want) revert WrongStatus(p.status, want);
    }
}
