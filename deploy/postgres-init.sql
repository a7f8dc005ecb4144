-- Run once by the postgres image when its data folder is new: the cluster profile's nodes keep
-- their finished games in a database of their own (docker-compose.yml). The tables themselves
-- are made by `donjon archive migrate`, never here.
CREATE DATABASE donjon_cluster OWNER donjon;
