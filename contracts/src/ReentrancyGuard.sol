// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title ReentrancyGuard
/// @notice `nonReentrant` functions of a contract cannot run inside one another: a receiver that
///         calls back while being paid gets `Reentrancy()`.
abstract contract ReentrancyGuard {
    uint256 private locked = 1;

    /// @notice A guarded function was entered while another one was running.
    error Reentrancy();

    modifier nonReentrant() {
        if (locked != 1) revert Reentrancy();
        locked = 2;
        _;
        locked = 1;
    }
}
