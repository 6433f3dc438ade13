// SPDX-License-Identifier: MIT
// libsystemc.so (which the run library pulls in) calls sc_main from its own main; the harnesses
// have main() of their own (libFuzzer's, or replay_main.cpp) and never start SystemC.
extern "C" int sc_main(int, char**) { return 0; }
