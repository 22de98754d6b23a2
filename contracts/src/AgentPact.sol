// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Currencies} from "./Currencies.sol";
import {OracleRegistry} from "./OracleRegistry.sol";

/// @title AgentPact
/// @notice Escrow for a piece of work between two agents. Either party creates a pact with the terms
///         (payment, deadline, oracles and their weights, pass threshold, arbitrator, review period);
///         the other accepts by depositing its side. Each side stakes 10% of the payment. Oracles
///         score submitted work, the buyer approves (or the review period lapses), and the escrow pays
///         out. Every payout is credited to a balance that its owner pulls with `withdraw`.
///
///         Every non-terminal status has an exit that one party can take alone, and every clock is
///         bounded (deadline <= 365 days ahead, review period <= 30 days), so each exit opens:
///         NEGOTIATING   -> creator cancels, or anyone after `acceptBy`        (creator refunded)
///         FUNDED        -> anyone after the deadline                          (buyer takes all)
///         IN_PROGRESS   -> anyone after the deadline                          (buyer takes all)
///         PENDING_VERIFY-> anyone finalizes after the verification window     (silent oracles score 0)
///         PENDING_APPROVAL -> anyone auto-approves after the review period    (seller paid)
///         DISPUTED      -> anyone after the dispute window                    (each side refunded)
///
///         While a pact is funded, started, submitted or disputed, either party may offer to end it
///         with the payment divided (`proposeSettlement`); the other ends it by accepting that very
///         offer (`acceptSettlement`), with no arbitrator. The arbitrator may rule a division too
///         (`resolveDisputeShare`). Shares are basis points of the payment, to the seller.
///
///         Every window closes for everyone at the same second: an act allowed at second `t` of a
///         window (accept, reject, dispute) is refused at `t + 1`, where the exit that ends it opens.
///         Acceptance closes at `acceptBy`, at least `MIN_WORK_WINDOW` before the deadline, so an
///         accepted seller always has time to deliver. A pact may name its `counterparty`: then no
///         one else can accept it.
///
///         A pact is paid in one currency (`Terms.currency`): native ETH, or a token on the
///         deployment's allowlist (`Currencies`). Payment, both stakes, every credit and its
///         withdrawal are in that currency. A token deposit can come with an EIP-2612 permit
///         (`createPactWithPermit`, `acceptPactWithPermit`) or an allowance approved beforehand.
contract AgentPact is Currencies {
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

    /// @notice One oracle's verdict on one pact.
    struct Verification {
        bool submitted;
        uint8 score;
        uint64 submittedAt;
        bytes32 proof;
    }

    /// @notice Review period used when a pact is created with zero.
    uint64 public constant DEFAULT_REVIEW_PERIOD = 3 days;
    /// @notice Seconds after submission that oracles have before anyone may finalize without them.
    uint64 public constant VERIFICATION_PERIOD = 3 days;
    /// @notice Seconds the arbitrator has before anyone may end a dispute with each side refunded.
    uint64 public constant DISPUTE_PERIOD = 7 days;
    /// @notice Most oracles one pact may name (bounds every loop over them).
    uint256 public constant MAX_ORACLES = 10;
    /// @notice Each side's stake is payment / STAKE_DIVISOR (10%).
    uint256 public constant STAKE_DIVISOR = 10;
    /// @notice Largest payment, in base units (keeps payment + stakes far from overflow).
    uint256 public constant MAX_PAYMENT = type(uint128).max;
    /// @notice Seconds between the close of acceptance and the deadline, at the least: the time an
    ///         accepted seller is sure to have for the work.
    uint64 public constant MIN_WORK_WINDOW = 1 hours;
    /// @notice Latest deadline, in seconds from the pact's creation.
    uint64 public constant MAX_DURATION = 365 days;
    /// @notice Longest review period.
    uint64 public constant MAX_REVIEW_PERIOD = 30 days;
    /// @notice Shortest review period: the time a buyer is sure to have to look at verified work.
    uint64 public constant MIN_REVIEW_PERIOD = 1 hours;
    /// @notice Lowest pass mark: a threshold of 0 would pass work every oracle scored 0.
    uint8 public constant MIN_THRESHOLD = 1;
    /// @notice A share of the payment, in basis points, that gives one side all of it.
    uint16 public constant FULL_SHARE = 10_000;
    /// @notice Longest spec URI, in bytes.
    uint256 public constant MAX_SPEC_URI = 256;

    /// @notice The registry whose active oracles pacts may name.
    OracleRegistry public immutable registry;
    /// @notice Number of pacts created; ids run from 0 to pactCount - 1.
    uint256 public pactCount;

    mapping(uint256 => Pact) private pacts;
    mapping(uint256 => mapping(address => Verification)) private verifications;
    mapping(uint256 => Settlement) private settlements;

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
    ///         COMPLETED at 10000, REFUNDED at 0, SPLIT between.
    event DisputeResolved(uint256 indexed pactId, address indexed arbitrator, uint16 sellerShare);
    /// @notice A party offered to end the pact with `sellerShare` basis points of the payment to the
    ///         seller, until `expiresAt` and while the pact stays in `status`; it replaces any offer
    ///         that stood.
    event SettlementProposed(
        uint256 indexed pactId, address indexed by, Status status, uint32 round, uint16 sellerShare, uint64 expiresAt
    );
    /// @notice The party that made offer `round` took it back.
    event SettlementWithdrawn(uint256 indexed pactId, address indexed by, uint32 round);
    /// @notice The other party accepted offer `round`; status COMPLETED at 10000, REFUNDED at 0, SPLIT
    ///         between.
    event SettlementAccepted(uint256 indexed pactId, address indexed by, uint32 round, uint16 sellerShare);
    /// @notice A deadline or window lapsed and `caller` ended the pact; status REFUNDED.
    ///         `from` is the status the pact had.
    event TimeoutClaimed(uint256 indexed pactId, address indexed caller, Status from);
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

    /// @param tokens The ERC-20 tokens pacts may be paid in besides ETH, fixed for good.
    constructor(OracleRegistry registry_, address[] memory tokens) Currencies(tokens) {
        registry = registry_;
    }

    // ---------------------------------------------------------------- creating and accepting

    /// @notice Propose a pact. A buyer deposits payment + 10%; a seller deposits 10% of the payment:
    ///         as `msg.value` for ETH, from an approved allowance for a token.
    /// @return pactId The new pact's id.
    function createPact(Terms calldata t) external payable nonReentrant returns (uint256 pactId) {
        return open(t, msg.value, noPermit());
    }

    /// @notice `createPact` for a token pact, the creator's deposit allowed by an EIP-2612 permit
    ///         signed for exactly that deposit: one transaction, no approval beforehand.
    function createPactWithPermit(Terms calldata t, Permit calldata permit)
        external
        nonReentrant
        returns (uint256 pactId)
    {
        return open(t, 0, permit);
    }

    /// @notice Join an open pact as the missing side, depositing that side's amount (`msg.value` for
    ///         ETH, an approved allowance for a token). Only until `acceptBy`, and only as the named
    ///         counterparty when the pact names one.
    function acceptPact(uint256 pactId) external payable nonReentrant {
        join(pactId, msg.value, noPermit());
    }

    /// @notice `acceptPact` for a token pact, the deposit allowed by an EIP-2612 permit signed for
    ///         exactly that deposit.
    function acceptPactWithPermit(uint256 pactId, Permit calldata permit) external nonReentrant {
        join(pactId, 0, permit);
    }

    /// @dev Checks the terms, records the pact and takes the creator's deposit.
    function open(Terms calldata t, uint256 value, Permit memory permit) private returns (uint256 pactId) {
        if (!acceptsCurrency(t.currency)) revert CurrencyNotAllowed(t.currency);
        uint256 stake = t.payment / STAKE_DIVISOR;
        if (stake == 0) revert PaymentTooSmall(t.payment, STAKE_DIVISOR);
        if (t.payment > MAX_PAYMENT) revert PaymentTooLarge(t.payment, MAX_PAYMENT);
        uint64 acceptBy = checkClocks(t);
        if (bytes(t.specUri).length > MAX_SPEC_URI) revert SpecUriTooLong(bytes(t.specUri).length, MAX_SPEC_URI);
        if (t.threshold > 100) revert ThresholdTooHigh(t.threshold);
        if (t.threshold < MIN_THRESHOLD) revert ThresholdTooLow(t.threshold, MIN_THRESHOLD);
        if (t.arbitrator == address(0) || t.arbitrator == msg.sender) revert InvalidArbitrator(t.arbitrator);
        if (t.counterparty == msg.sender || (t.counterparty != address(0) && t.counterparty == t.arbitrator)) {
            revert ConflictOfInterest(t.counterparty);
        }
        checkOracles(t.oracles, t.weights, t.counterparty);

        bool byBuyer = t.initiator == Initiator.BUYER;
        uint256 deposit = creatorDeposit(t.initiator, t.payment);

        pactId = pactCount++;
        Pact storage p = pacts[pactId];
        p.initiator = t.initiator;
        p.arbitrator = t.arbitrator;
        p.counterparty = t.counterparty;
        p.threshold = t.threshold;
        p.deadline = t.deadline;
        p.acceptBy = acceptBy;
        p.reviewPeriod = t.reviewPeriod == 0 ? DEFAULT_REVIEW_PERIOD : t.reviewPeriod;
        p.currency = t.currency;
        p.payment = t.payment;
        p.specHash = t.specHash;
        p.specUri = t.specUri;
        p.oracles = t.oracles;
        p.weights = t.weights;
        if (byBuyer) {
            p.buyer = msg.sender;
            p.buyerStake = stake;
        } else {
            p.seller = msg.sender;
            p.sellerStake = stake;
        }
        emitCreated(pactId, p, stake, deposit);
        takeDeposit(t.currency, deposit, value, permit);
    }

    /// @dev Checks the accepter and takes its deposit: the pact is FUNDED.
    function join(uint256 pactId, uint256 value, Permit memory permit) private {
        Pact storage p = pactAt(pactId, Status.NEGOTIATING);
        if (block.timestamp > p.acceptBy) revert AcceptWindowClosed(p.acceptBy);
        if (p.counterparty != address(0) && msg.sender != p.counterparty) revert NotCounterparty(p.counterparty);
        if (msg.sender == p.arbitrator || isPactOracle(p, msg.sender) || msg.sender == creatorOf(p)) {
            revert ConflictOfInterest(msg.sender);
        }
        uint256 stake = p.payment / STAKE_DIVISOR;
        uint256 deposit = accepterDeposit(p.initiator, p.payment);
        if (p.initiator == Initiator.BUYER) {
            p.seller = msg.sender;
            p.sellerStake = stake;
        } else {
            p.buyer = msg.sender;
            p.buyerStake = stake;
        }
        p.status = Status.FUNDED;
        emit PactAccepted(pactId, msg.sender, p.buyer, p.seller, deposit);
        takeDeposit(p.currency, deposit, value, permit);
    }

    /// @notice The creator takes back an unaccepted pact and its deposit.
    function cancelPact(uint256 pactId) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.NEGOTIATING);
        if (msg.sender != creatorOf(p)) revert NotCreator();
        p.status = Status.REFUNDED;
        emit PactCancelled(pactId, msg.sender);
        refundCreator(pactId, p);
    }

    // ---------------------------------------------------------------- work

    /// @notice The seller signals that work has begun.
    function startWork(uint256 pactId) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.FUNDED);
        if (msg.sender != p.seller) revert NotSeller();
        if (block.timestamp > p.deadline) revert DeadlinePassed(p.deadline);
        p.status = Status.IN_PROGRESS;
        emit WorkStarted(pactId, msg.sender);
    }

    /// @notice The seller delivers, naming the deliverable by hash; oracles may now score it.
    function submitWork(uint256 pactId, bytes32 proofHash) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.IN_PROGRESS);
        if (msg.sender != p.seller) revert NotSeller();
        if (block.timestamp > p.deadline) revert DeadlinePassed(p.deadline);
        if (proofHash == bytes32(0)) revert ZeroHash();
        p.proofHash = proofHash;
        p.submittedAt = uint64(block.timestamp);
        p.status = Status.PENDING_VERIFY;
        emit WorkSubmitted(pactId, msg.sender, proofHash);
    }

    // ---------------------------------------------------------------- verification

    /// @notice A pact's oracle scores the delivered work, once, from 0 to 100, until the verification
    ///         window closes (from the next second anyone may finalize, the silent scoring 0).
    function submitVerification(uint256 pactId, uint8 score, bytes32 proof) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.PENDING_VERIFY);
        if (!isPactOracle(p, msg.sender)) revert NotPactOracle();
        uint64 closesAt = p.submittedAt + VERIFICATION_PERIOD;
        if (block.timestamp > closesAt) revert VerificationClosed(closesAt);
        if (score > 100) revert ScoreTooHigh(score);
        if (proof == bytes32(0)) revert ZeroHash();
        Verification storage v = verifications[pactId][msg.sender];
        if (v.submitted) revert AlreadyScored(msg.sender);
        verifications[pactId][msg.sender] = Verification(true, score, uint64(block.timestamp), proof);
        p.scoreCount += 1;
        emit VerificationSubmitted(pactId, msg.sender, score, proof);
    }

    /// @notice Combine the oracle scores: sum(weight * score) / 100, a silent oracle scoring 0.
    ///         Callable by anyone once every oracle scored, or after the verification window.
    ///         A pass moves the pact to PENDING_APPROVAL, a fail to DISPUTED.
    function finalizeVerification(uint256 pactId) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.PENDING_VERIFY);
        uint64 closesAt = p.submittedAt + VERIFICATION_PERIOD;
        if (p.scoreCount < p.oracles.length && block.timestamp <= closesAt) {
            revert VerificationOpen(p.scoreCount, p.oracles.length, closesAt);
        }
        uint256 weighted = 0;
        for (uint256 i = 0; i < p.oracles.length; i++) {
            weighted += uint256(p.weights[i]) * verifications[pactId][p.oracles[i]].score;
        }
        uint8 score = uint8(weighted / 100);
        bool passed = score >= p.threshold;
        p.finalScore = score;
        if (passed) {
            p.status = Status.PENDING_APPROVAL;
            p.verifiedAt = uint64(block.timestamp);
        } else {
            p.status = Status.DISPUTED;
            p.disputedAt = uint64(block.timestamp);
        }
        emit VerificationFinalized(pactId, score, passed, p.scoreCount);
    }

    // ---------------------------------------------------------------- buyer review

    /// @notice The buyer accepts verified work: seller gets payment + its stake, buyer its stake.
    function approveWork(uint256 pactId) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.PENDING_APPROVAL);
        if (msg.sender != p.buyer) revert NotBuyer();
        complete(pactId, p, false);
    }

    /// @notice The buyer refuses verified work within the review period; the arbitrator decides.
    ///         The review period's last second is the last one a reject is taken; from the next,
    ///         only `autoApprove` ends the review.
    function rejectWork(uint256 pactId) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.PENDING_APPROVAL);
        if (msg.sender != p.buyer) revert NotBuyer();
        uint64 endsAt = p.verifiedAt + p.reviewPeriod;
        if (block.timestamp > endsAt) revert ReviewPeriodOver(endsAt);
        p.status = Status.DISPUTED;
        p.disputedAt = uint64(block.timestamp);
        emit WorkRejected(pactId, msg.sender);
    }

    /// @notice Anyone completes a pact whose buyer stayed silent past the review period.
    function autoApprove(uint256 pactId) external nonReentrant {
        Pact storage p = pactAt(pactId, Status.PENDING_APPROVAL);
        uint64 endsAt = p.verifiedAt + p.reviewPeriod;
        if (block.timestamp <= endsAt) revert ReviewPeriodActive(endsAt);
        complete(pactId, p, true);
    }

    // ---------------------------------------------------------------- disputes

    /// @notice Buyer or seller sends a funded, started or submitted pact to the agreed arbitrator.
    ///         `arbitrator` must be the one fixed in the terms. A funded or started pact can be
    ///         disputed until the deadline (after it, the buyer's timeout claim is the exit); a
    ///         submitted one until the verification window closes (after it, finalization is).
    function raiseDispute(uint256 pactId, address arbitrator) external nonReentrant {
        Pact storage p = pactExists(pactId);
        if (p.status != Status.FUNDED && p.status != Status.IN_PROGRESS && p.status != Status.PENDING_VERIFY) {
            revert NotDisputable(p.status);
        }
        if (msg.sender != p.buyer && msg.sender != p.seller) revert NotParty();
        if (arbitrator != p.arbitrator) revert ArbitratorMismatch(arbitrator, p.arbitrator);
        openWindow(p);
        p.status = Status.DISPUTED;
        p.disputedAt = uint64(block.timestamp);
        emit DisputeRaised(pactId, msg.sender, arbitrator);
    }

    /// @notice The arbitrator rules for one side, until the dispute window closes (from the next second
    ///         anyone may end the dispute with each side refunded). The winner takes payment and both
    ///         stakes: `resolveDisputeShare` at 10000 or 0.
    function resolveDispute(uint256 pactId, bool sellerWins) external nonReentrant {
        rule(pactId, sellerWins ? FULL_SHARE : 0);
    }

    /// @notice The arbitrator rules `sellerShare` basis points to the seller, the rest to the buyer,
    ///         until the dispute window closes. The share divides the pot (payment and both stakes):
    ///         each side forfeits its stake in proportion to how far the ruling went against it.
    function resolveDisputeShare(uint256 pactId, uint16 sellerShare) external nonReentrant {
        if (sellerShare > FULL_SHARE) revert ShareTooLarge(sellerShare, FULL_SHARE);
        rule(pactId, sellerShare);
    }

    // ---------------------------------------------------------------- settlements

    /// @notice A party of a funded, started, submitted or disputed pact offers to end it with
    ///         `sellerShare` basis points of the payment to the seller and the rest to the buyer, each
    ///         stake back to its owner. The offer stands until `expiresAt` (0: until the status's
    ///         window closes, which is also the latest allowed), until it is withdrawn, until either
    ///         party makes another, or until the pact moves on.
    /// @return round The offer's number, which an acceptance names.
    function proposeSettlement(uint256 pactId, uint16 sellerShare, uint64 expiresAt)
        external
        nonReentrant
        returns (uint32 round)
    {
        Pact storage p = pactExists(pactId);
        uint64 closesAt = openWindow(p);
        if (msg.sender != p.buyer && msg.sender != p.seller) revert NotParty();
        if (sellerShare > FULL_SHARE) revert ShareTooLarge(sellerShare, FULL_SHARE);
        uint64 expires = expiresAt == 0 ? closesAt : expiresAt;
        if (expires < block.timestamp || expires > closesAt) {
            revert SettlementExpiryOutOfRange(expiresAt, uint64(block.timestamp), closesAt);
        }
        round = settlements[pactId].round + 1;
        settlements[pactId] = Settlement(msg.sender, p.status, sellerShare, round, expires);
        emit SettlementProposed(pactId, msg.sender, p.status, round, sellerShare, expires);
    }

    /// @notice The party that made the standing offer takes it back.
    function withdrawSettlement(uint256 pactId) external nonReentrant {
        pactExists(pactId);
        Settlement storage s = settlements[pactId];
        if (s.by == address(0)) revert NoSettlement(pactId);
        if (msg.sender != s.by) revert NotProposer();
        s.by = address(0);
        emit SettlementWithdrawn(pactId, msg.sender, s.round);
    }

    /// @notice The other party accepts the standing offer, naming its `round` and `sellerShare` (an
    ///         offer replaced in between is refused, never accepted in its new form), until it
    ///         expires and while the pact is in the status it was made in. The pact ends.
    function acceptSettlement(uint256 pactId, uint32 round, uint16 sellerShare) external nonReentrant {
        Pact storage p = pactExists(pactId);
        Settlement memory s = settlements[pactId];
        if (s.by == address(0)) revert NoSettlement(pactId);
        if (msg.sender != p.buyer && msg.sender != p.seller) revert NotParty();
        if (msg.sender == s.by) revert OwnSettlement();
        if (round != s.round || sellerShare != s.sellerShare) revert SettlementReplaced(s.round, s.sellerShare);
        if (p.status != s.status) revert SettlementStale(s.status, p.status);
        if (block.timestamp > s.expiresAt) revert SettlementExpired(s.expiresAt);
        settlements[pactId].by = address(0);
        emit SettlementAccepted(pactId, msg.sender, round, sellerShare);
        divide(pactId, p, sellerShare, false);
    }

    // ---------------------------------------------------------------- timeouts

    /// @notice Anyone ends a pact whose clock ran out:
    ///         NEGOTIATING past `acceptBy` -> the creator gets its deposit back;
    ///         FUNDED or IN_PROGRESS past the deadline -> the buyer gets payment and both stakes;
    ///         DISPUTED past the dispute window -> each side gets back what it put in.
    function claimTimeout(uint256 pactId) external nonReentrant {
        Pact storage p = pactExists(pactId);
        Status from = p.status;
        if (from == Status.NEGOTIATING) {
            if (block.timestamp <= p.acceptBy) revert AcceptWindowOpen(p.acceptBy);
        } else if (from == Status.FUNDED || from == Status.IN_PROGRESS) {
            if (block.timestamp <= p.deadline) revert DeadlineNotReached(p.deadline);
        } else if (from == Status.DISPUTED) {
            uint64 endsAt = p.disputedAt + DISPUTE_PERIOD;
            if (block.timestamp <= endsAt) revert DisputePeriodActive(endsAt);
        } else {
            revert NoTimeoutFrom(from);
        }
        p.status = Status.REFUNDED;
        emit TimeoutClaimed(pactId, msg.sender, from);
        if (from == Status.NEGOTIATING) {
            refundCreator(pactId, p);
        } else if (from == Status.DISPUTED) {
            credit(pactId, p.buyer, p.payment + p.buyerStake);
            credit(pactId, p.seller, p.sellerStake);
        } else {
            credit(pactId, p.buyer, p.payment + p.buyerStake + p.sellerStake);
        }
    }

    // ---------------------------------------------------------------- views

    /// @notice A pact's full state.
    function getPact(uint256 pactId) external view returns (Pact memory) {
        return pactExists(pactId);
    }

    /// @notice The last offer to settle `pactId` (`by` is zero when none stands).
    function getSettlement(uint256 pactId) external view returns (Settlement memory) {
        pactExists(pactId);
        return settlements[pactId];
    }

    /// @notice What `oracle` submitted for `pactId` (all zero when nothing).
    function getVerification(uint256 pactId, address oracle) external view returns (Verification memory) {
        pactExists(pactId);
        return verifications[pactId][oracle];
    }

    // ---------------------------------------------------------------- internals

    /// @dev Checks the deadline and the review period against their bounds and returns the last
    ///      second of acceptance: `t.acceptBy`, or `deadline - MIN_WORK_WINDOW` when it is zero.
    function checkClocks(Terms calldata t) private view returns (uint64 acceptBy) {
        uint64 now_ = uint64(block.timestamp);
        if (t.deadline <= now_) revert DeadlineInPast(t.deadline, now_);
        uint64 earliest = now_ + MIN_WORK_WINDOW + 1;
        uint64 latest = now_ + MAX_DURATION;
        if (t.deadline < earliest || t.deadline > latest) revert DeadlineOutOfRange(t.deadline, earliest, latest);
        uint64 lastAccept = t.deadline - MIN_WORK_WINDOW;
        acceptBy = t.acceptBy == 0 ? lastAccept : t.acceptBy;
        if (acceptBy <= now_ || acceptBy > lastAccept) revert AcceptByOutOfRange(t.acceptBy, now_ + 1, lastAccept);
        if (t.reviewPeriod > MAX_REVIEW_PERIOD) revert ReviewPeriodTooLong(t.reviewPeriod, MAX_REVIEW_PERIOD);
        if (t.reviewPeriod != 0 && t.reviewPeriod < MIN_REVIEW_PERIOD) {
            revert ReviewPeriodTooShort(t.reviewPeriod, MIN_REVIEW_PERIOD);
        }
    }

    /// @dev The last second of the window `p`'s status gives its parties (to dispute, settle, rule);
    ///      from the next one the exit that ends the status opens. Reverts once it has closed, and for
    ///      a status without such a window.
    function openWindow(Pact storage p) private view returns (uint64 closesAt) {
        Status s = p.status;
        if (s == Status.FUNDED || s == Status.IN_PROGRESS) {
            closesAt = p.deadline;
            if (block.timestamp > closesAt) revert DeadlinePassed(closesAt);
        } else if (s == Status.PENDING_VERIFY) {
            closesAt = p.submittedAt + VERIFICATION_PERIOD;
            if (block.timestamp > closesAt) revert VerificationClosed(closesAt);
        } else if (s == Status.DISPUTED) {
            closesAt = p.disputedAt + DISPUTE_PERIOD;
            if (block.timestamp > closesAt) revert DisputePeriodOver(closesAt);
        } else {
            revert NotSettleable(s);
        }
    }

    /// @dev The arbitrator's ruling on a disputed pact, within the dispute window.
    function rule(uint256 pactId, uint16 sellerShare) private {
        Pact storage p = pactAt(pactId, Status.DISPUTED);
        if (msg.sender != p.arbitrator) revert NotArbitrator();
        openWindow(p);
        emit DisputeResolved(pactId, msg.sender, sellerShare);
        divide(pactId, p, sellerShare, true);
    }

    /// @dev Ends `p` with `sellerShare` basis points to the seller and the rest to the buyer: of the
    ///      pot (payment and both stakes) for a ruling, of the payment for a settlement (each stake
    ///      back to its owner). Rounding favours the buyer by at most one base unit. All to the
    ///      seller is COMPLETED, all to the buyer REFUNDED, anything between SPLIT.
    function divide(uint256 pactId, Pact storage p, uint16 sellerShare, bool ruled) private {
        p.status = sellerShare == FULL_SHARE ? Status.COMPLETED : (sellerShare == 0 ? Status.REFUNDED : Status.SPLIT);
        uint256 pot = p.payment + p.buyerStake + p.sellerStake;
        uint256 toSeller = ruled
            ? pot * sellerShare / FULL_SHARE
            : p.payment * sellerShare / FULL_SHARE + p.sellerStake;
        if (toSeller > 0) credit(pactId, p.seller, toSeller);
        if (pot > toSeller) credit(pactId, p.buyer, pot - toSeller);
    }

    function checkOracles(address[] calldata oracles, uint8[] calldata weights, address counterparty)
        private
        view
    {
        if (oracles.length == 0 || oracles.length > MAX_ORACLES) {
            revert OracleCountOutOfRange(oracles.length, 1, MAX_ORACLES);
        }
        if (oracles.length != weights.length) revert LengthMismatch(oracles.length, weights.length);
        uint256 sum = 0;
        for (uint256 i = 0; i < oracles.length; i++) {
            address o = oracles[i];
            if (weights[i] == 0) revert ZeroWeight(o);
            if (o == msg.sender || o == counterparty) revert ConflictOfInterest(o);
            for (uint256 j = 0; j < i; j++) {
                if (oracles[j] == o) revert DuplicateOracle(o);
            }
            // At most MAX_ORACLES view calls into this deployment's own registry (docs/contracts.md §Slither).
            // slither-disable-next-line calls-loop
            if (!registry.isActive(o)) revert OracleNotActive(o);
            sum += weights[i];
        }
        if (sum != 100) revert WeightsSum(sum);
    }

    function emitCreated(uint256 pactId, Pact storage p, uint256 stake, uint256 deposit) private {
        emit PactCreated(
            pactId,
            msg.sender,
            p.counterparty,
            p.initiator,
            p.arbitrator,
            p.specHash,
            p.specUri,
            p.deadline,
            p.acceptBy,
            p.reviewPeriod,
            p.threshold,
            p.currency,
            p.payment,
            stake,
            deposit,
            p.oracles,
            p.weights
        );
    }

    function complete(uint256 pactId, Pact storage p, bool auto_) private {
        p.status = Status.COMPLETED;
        emit WorkApproved(pactId, msg.sender, auto_);
        credit(pactId, p.seller, p.payment + p.sellerStake);
        credit(pactId, p.buyer, p.buyerStake);
    }

    function refundCreator(uint256 pactId, Pact storage p) private {
        if (p.initiator == Initiator.BUYER) {
            credit(pactId, p.buyer, p.payment + p.buyerStake);
        } else {
            credit(pactId, p.seller, p.sellerStake);
        }
    }

    function credit(uint256 pactId, address to, uint256 amount) private {
        address currency = pacts[pactId].currency;
        addCredit(currency, to, amount);
        emit Payout(pactId, to, currency, amount);
    }

    /// @dev What the creator deposits: payment + stake for a buyer, the stake for a seller.
    function creatorDeposit(Initiator initiator, uint256 payment) private pure returns (uint256) {
        uint256 stake = payment / STAKE_DIVISOR;
        return initiator == Initiator.BUYER ? payment + stake : stake;
    }

    /// @dev What the accepter deposits: the other side's amount.
    function accepterDeposit(Initiator initiator, uint256 payment) private pure returns (uint256) {
        return creatorDeposit(initiator == Initiator.BUYER ? Initiator.SELLER : Initiator.BUYER, payment);
    }

    function creatorOf(Pact storage p) private view returns (address) {
        return p.initiator == Initiator.BUYER ? p.buyer : p.seller;
    }

    function isPactOracle(Pact storage p, address who) private view returns (bool) {
        for (uint256 i = 0; i < p.oracles.length; i++) {
            if (p.oracles[i] == who) return true;
        }
        return false;
    }

    function pactExists(uint256 pactId) private view returns (Pact storage p) {
        if (pactId >= pactCount) revert PactNotFound(pactId);
        p = pacts[pactId];
    }

    function pactAt(uint256 pactId, Status want) private view returns (Pact storage p) {
        p = pactExists(pactId);
        if (p.status != want) revert WrongStatus(p.status, want);
    }
}
