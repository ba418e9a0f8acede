from banditrepro.cli import main

raise SystemExit(main())
