from gateway.cli.app import main

main()
