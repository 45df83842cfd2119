from tkbench.cli import main

main()
