from dshaudit.cli import main

main()
