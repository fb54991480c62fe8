"""The front ends that never draw: print, JSON, RPC (pi's protocol) and ACP (editors); they never import textual."""
