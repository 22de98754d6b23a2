// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {PactStorage} from "./PactStorage.sol";

/// @notice The ERC-20 calls the escrow makes.
interface IERC20 {
    function balanceOf(address account) external view returns (uint256);
    function decimals() external view returns (uint8);
    function symbol() external view returns (string memory);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// @notice EIP-2612: an allowance granted by the owner's signature instead of a transaction.
interface IERC20Permit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/// @title Currencies
/// @notice What the escrow holds and pays in: native ETH (the zero address) or an ERC-20 on the
///         allowlist the deployment fixes at construction. Nothing can add or remove a currency
///         later. Each allowed currency is announced with its decimals and symbol
///         (`CurrencyAllowed`), so readers never have to ask the token.
///
///         A deposit in a token is pulled with `transferFrom` and measured: a token that delivers
///         less (or more) than asked, as fee-on-transfer tokens do, is refused, and so is a deposit
///         while the escrow holds less of a token than it owes (a token that rebased downwards).
///         Tokens that return no bool are accepted; one that returns `false` is a failed transfer.
///         Every payout is a credit in the pact's currency that its owner pulls with `withdraw`.
abstract contract Currencies is PactStorage {
    /// @notice The currency of native ETH.
    address public constant NATIVE = address(0);
    /// @notice Most tokens one deployment may allow besides ETH.
    uint256 public constant MAX_TOKENS = 8;
    /// @notice Most decimals an allowed token may have.
    uint8 public constant MAX_DECIMALS = 36;
    /// @notice Longest symbol an allowed token may have, in bytes.
    uint256 public constant MAX_SYMBOL = 32;

    /// @notice `currency` may be used by pacts of this deployment (zero: native ETH).
    event CurrencyAllowed(address indexed currency, uint8 decimals, string symbol);
    /// @notice `account` withdrew `amount` base units of its credits in `currency`.
    event Withdrawn(address indexed account, address indexed currency, uint256 amount);

    /// @notice The permit parts of an EIP-2612 signature granting this escrow a deposit.
    struct Permit {
        uint256 deadline;
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    error CurrencyNotAllowed(address currency);
    error NotAToken(address token);
    error TooManyTokens(uint256 count, uint256 maximum);
    error DuplicateCurrency(address token);
    error DepositMismatch(address token, uint256 expected, uint256 arrived);
    error BalanceShort(address token, uint256 owed, uint256 held);
    error TokenTransferFailed(address token);
    error NoPermitForNative();
    error WrongValue(uint256 sent, uint256 required);
    error NothingToWithdraw();
    error TransferFailed();

    /// @dev Reads each token's decimals and symbol once, here, and announces them. A token that
    ///      does not answer both fails the deployment.
    constructor(address[] memory tokens) {
        if (tokens.length > MAX_TOKENS) revert TooManyTokens(tokens.length, MAX_TOKENS);
        book.allowed[NATIVE] = true;
        emit CurrencyAllowed(NATIVE, 18, "ETH");
        for (uint256 i = 0; i < tokens.length; i++) {
            address token = tokens[i];
            if (token == NATIVE || token.code.length == 0) revert NotAToken(token);
            if (book.allowed[token]) revert DuplicateCurrency(token);
            // At most MAX_TOKENS view calls, once, at deployment (docs/contracts.md §Slither).
            // slither-disable-next-line calls-loop
            uint8 decimals = IERC20(token).decimals();
            // slither-disable-next-line calls-loop
            string memory symbol = IERC20(token).symbol();
            if (decimals > MAX_DECIMALS || bytes(symbol).length == 0 || bytes(symbol).length > MAX_SYMBOL) {
                revert NotAToken(token);
            }
            book.allowed[token] = true;
            emit CurrencyAllowed(token, decimals, symbol);
        }
    }

    /// @notice Whether pacts and prices may be in `currency` (zero: native ETH, always).
    function acceptsCurrency(address currency) public view returns (bool) {
        return book.allowed[currency];
    }

    /// @notice Base units of `currency` credited to `account` and not yet withdrawn.
    function balances(address currency, address account) external view returns (uint256) {
        return book.credits[currency][account];
    }

    /// @notice Base units of `currency` the escrow owes: locked in pacts plus unwithdrawn credits.
    function owed(address currency) external view returns (uint256) {
        return book.owed[currency];
    }

    /// @notice Send the caller every base unit of `currency` credited to it.
    function withdraw(address currency) external nonReentrant {
        uint256 amount = book.credits[currency][msg.sender];
        if (amount == 0) revert NothingToWithdraw();
        book.credits[currency][msg.sender] = 0;
        book.owed[currency] -= amount;
        emit Withdrawn(msg.sender, currency, amount);
        if (currency == NATIVE) {
            (bool ok,) = msg.sender.call{value: amount}("");
            if (!ok) revert TransferFailed();
        } else {
            callToken(currency, abi.encodeCall(IERC20.transfer, (msg.sender, amount)));
        }
    }

    /// @dev Takes `amount` of `currency` from the caller, last in every guarded call that takes a
    ///      deposit: `value` must be exactly it for ETH and zero for a token, whose arrival is
    ///      measured. With `permit.deadline` non-zero, the caller's EIP-2612 permit for `amount` is
    ///      used first. A permit that fails (one somebody else already submitted, front-running
    ///      this call) is ignored: the allowance it granted is there, and the pull fails plainly
    ///      when no allowance is.
    ///      Every caller is nonReentrant, so nothing runs between the two balance reads but the
    ///      token itself, which is what they measure (docs/contracts.md §Slither).
    // slither-disable-start reentrancy-balance
    function takeDeposit(address currency, uint256 amount, uint256 value, Permit memory permit) internal {
        if (currency == NATIVE) {
            if (permit.deadline != 0) revert NoPermitForNative();
            if (value != amount) revert WrongValue(value, amount);
            book.owed[currency] += amount;
            return;
        }
        if (value != 0) revert WrongValue(value, 0);
        uint256 held = IERC20(currency).balanceOf(address(this));
        if (held < book.owed[currency]) revert BalanceShort(currency, book.owed[currency], held);
        book.owed[currency] += amount;
        if (permit.deadline != 0) {
            try IERC20Permit(currency).permit(
                msg.sender, address(this), amount, permit.deadline, permit.v, permit.r, permit.s
            ) {} catch {}
        }
        callToken(currency, abi.encodeCall(IERC20.transferFrom, (msg.sender, address(this), amount)));
        uint256 after_ = IERC20(currency).balanceOf(address(this));
        if (after_ < held || after_ - held != amount) {
            revert DepositMismatch(currency, amount, after_ < held ? 0 : after_ - held);
        }
    }
    // slither-disable-end reentrancy-balance

    /// @dev No permit: the deposit is sent along (ETH) or already approved (a token).
    function noPermit() internal pure returns (Permit memory) {
        return Permit(0, 0, bytes32(0), bytes32(0));
    }

    /// @dev Calls a token, accepting no return data or `true`, refusing a revert or `false`.
    function callToken(address token, bytes memory data) private {
        (bool ok, bytes memory ret) = token.call(data);
        if (!ok || (ret.length != 0 && (ret.length != 32 || abi.decode(ret, (uint256)) != 1))) {
            revert TokenTransferFailed(token);
        }
    }
}
