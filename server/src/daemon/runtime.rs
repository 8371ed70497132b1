//! The runtime directory, its service lock, the socket and the registration file (being written).
