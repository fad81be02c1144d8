// Placeholder entry point; the CLI is being written (src/cli).
int main() { return 0; }
